//! A cache kept beside a value's data: a copy of the value starts with it empty, it prints as its
//! name only and never makes two values unequal, so the value keeps its derived `Clone`, `Debug`
//! and `PartialEq`.

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

impl<T: Default> PartialEq for Memo<T> {
    fn eq(&self, _: &Memo<T>) -> bool {
        true
    }
}
