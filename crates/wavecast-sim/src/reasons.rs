//! Why layouts were set aside, grouped: reasons that differ only in their numbers are one
//! group, reported with the real figures (a range where they differ), never placeholders.
//! `plan train` and `plan serve` report their set-aside layouts through it.

use std::collections::BTreeMap;

/// A message's key, its text between numbers ([`split_numbers`]) joined by `N`, so reasons
/// group regardless of their numbers; digits inside names (`h200`, `fp8`) stay.
fn reason_key(pieces: &[String]) -> String {
    pieces.join("N")
}

/// The message cut at its numbers: the text between them (one more piece than numbers) and the
/// numbers as written. Digits inside names (`h200`, `fp8`) are text.
fn split_numbers(message: &str) -> (Vec<String>, Vec<String>) {
    let text: Vec<char> = message.chars().collect();
    // Room for the rest of the message in each piece at once: the planner files a reason for
    // every layout it sets aside, and a piece grown a character at a time is reallocated often.
    let (mut pieces, mut numbers) = (vec![String::with_capacity(message.len())], Vec::<String>::new());
    let mut in_name = false;
    for (i, &c) in text.iter().enumerate() {
        let prev = if i > 0 { text[i - 1] } else { ' ' };
        let piece = pieces.last_mut().expect("one piece more than numbers");
        if !c.is_ascii_digit() && c != '.' {
            in_name = c.is_alphanumeric() || c == '_' || c == '-';
            piece.push(c);
            continue;
        }
        let starts_number = c.is_ascii_digit() && !prev.is_ascii_digit() && prev != '.';
        if in_name || (c == '.' && !(prev.is_ascii_digit() && text.get(i + 1).is_some_and(char::is_ascii_digit))) {
            piece.push(c);
            in_name = in_name && c != '.';
        } else if starts_number {
            numbers.push(c.to_string());
            pieces.push(String::with_capacity(message.len() - i));
        } else if let Some(n) = numbers.last_mut() {
            n.push(c);
        }
    }
    (pieces, numbers)
}

/// The smallest and largest value one number of a reason took, as written.
struct Range {
    lo: (f64, String),
    hi: (f64, String),
}

impl Range {
    fn render(&self) -> String {
        if self.lo.0 == self.hi.0 {
            self.lo.1.clone()
        } else {
            format!("{}–{}", self.lo.1, self.hi.1)
        }
    }
}

/// Reasons that differ only in their numbers: how many, the text between the numbers, and the
/// range of each number.
struct Group {
    count: u64,
    pieces: Vec<String>,
    ranges: Vec<Range>,
}

/// Reasons layouts were set aside, grouped when they differ only in their numbers. Each group
/// keeps, per number, the smallest and largest value seen, so the report gives real figures
/// ("needs 96.2–160.4 GB of 80 GB") instead of placeholders.
#[derive(Default)]
pub struct SetAside {
    groups: BTreeMap<String, Group>,
}

impl SetAside {
    pub fn add(&mut self, message: &str) {
        // Most reasons the planner files come again and again without a number ("does not fit
        // in memory"): such a message is its own key and has no ranges to widen.
        if !message.bytes().any(|b| b.is_ascii_digit()) {
            if let Some(group) = self.groups.get_mut(message) {
                group.count += 1;
                return;
            }
        }
        let (pieces, numbers) = split_numbers(message);
        let key = reason_key(&pieces);
        let parsed: Vec<(f64, String)> = numbers.into_iter().map(|n| (n.parse().unwrap_or(f64::NAN), n)).collect();
        let group = self.groups.entry(key).or_insert_with(|| Group { count: 0, pieces, ranges: parsed.iter().map(|v| Range { lo: v.clone(), hi: v.clone() }).collect() });
        group.count += 1;
        for (range, value) in group.ranges.iter_mut().zip(parsed) {
            if value.0 < range.lo.0 {
                range.lo = value.clone();
            }
            if value.0 > range.hi.0 {
                range.hi = value;
            }
        }
    }

    /// Each group's message with its numbers (a range where they differ), and its count.
    pub fn into_counts(self) -> BTreeMap<String, u64> {
        let render = |g: &Group| {
            let mut out = g.pieces[0].clone();
            for (range, piece) in g.ranges.iter().zip(&g.pieces[1..]) {
                out.push_str(&range.render());
                out.push_str(piece);
            }
            out
        };
        self.groups.into_values().map(|g| (render(&g), g.count)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_group_regardless_of_numbers() {
        let a = reason_key(&split_numbers("h200 needs 123.4 GB of 80 GB with fp8.").0);
        let b = reason_key(&split_numbers("h200 needs 99.1 GB of 141 GB with fp8.").0);
        assert_eq!(a, b);
        assert_eq!(a, "h200 needs N GB of N GB with fp8.");
    }

    #[test]
    fn set_aside_reasons_keep_their_real_numbers() {
        let mut s = SetAside::default();
        s.add("h200 needs 123.4 GB of 80 GB with fp8.");
        s.add("h200 needs 99.1 GB of 80 GB with fp8.");
        s.add("h200 needs 150 GB of 80 GB with fp8.");
        s.add("tp3 does not divide 64 heads");
        // Without numbers, a reason seen before is counted as it is.
        s.add("does not fit in memory");
        s.add("does not fit in memory");
        let counts = s.into_counts();
        assert_eq!(counts.get("does not fit in memory"), Some(&2), "{counts:?}");
        assert_eq!(counts.get("h200 needs 99.1–150 GB of 80 GB with fp8."), Some(&3), "{counts:?}");
        assert_eq!(counts.get("tp3 does not divide 64 heads"), Some(&1), "{counts:?}");
        assert!(counts.keys().all(|k| !k.contains(" N ")), "{counts:?}");
    }
}
