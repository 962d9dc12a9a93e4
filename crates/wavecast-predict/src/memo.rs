//! A cache kept beside a value's data: a copy of the value starts with it empty and it prints as
//! its name only, so the value keeps its derived `Clone` and `Debug`.

/// The cache `T` (a lock around a map, say); only ever a shortcut to what the value computes.
#[derive(Default)]
pub(crate) struct Memo<T: Default>(pub(crate) T);

impl<T: Default> Clone for Memo<T> {
    fn clone(&self) -> Memo<T> {
        Memo::default()
    }
}

impl<T: Default> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memo")
    }
}
