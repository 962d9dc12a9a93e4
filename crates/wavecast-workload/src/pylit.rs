//! A parser for the small subset of Python literals NeuSight writes into its CSVs: nested lists
//! and tuples of strings and integers, e.g. `[['Linear', (4096, 1280, 3840)]]`.

#[derive(Debug, Clone, PartialEq)]
pub enum PyVal {
    Str(String),
    Int(i64),
    Seq(Vec<PyVal>),
}

impl PyVal {
    pub fn as_seq(&self) -> Option<&[PyVal]> {
        match self {
            PyVal::Seq(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyVal::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_int(&self) -> Option<i64> {
        match self {
            PyVal::Int(i) => Some(*i),
            _ => None,
        }
    }
}

/// Deepest nesting accepted; NeuSight writes three levels, and recursion past a few thousand
/// would overflow the stack.
const MAX_DEPTH: usize = 64;

pub fn parse(text: &str) -> Result<PyVal, String> {
    let mut p = Parser { s: text.as_bytes(), i: 0, depth: 0 };
    let v = p.value()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(format!("unexpected text after position {}", p.i));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Result<PyVal, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'[') => self.seq(b']'),
            Some(b'(') => self.seq(b')'),
            Some(b'\'') | Some(b'"') => self.string(),
            Some(c) if c.is_ascii_digit() || *c == b'-' => self.int(),
            Some(c) => Err(format!("unexpected '{}' at position {}", *c as char, self.i)),
            None => Err("unexpected end of text".into()),
        }
    }

    fn seq(&mut self, close: u8) -> Result<PyVal, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("lists nested deeper than {MAX_DEPTH} levels"));
        }
        let v = self.items(close);
        self.depth -= 1;
        v
    }

    fn items(&mut self, close: u8) -> Result<PyVal, String> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&close) {
                self.i += 1;
                return Ok(PyVal::Seq(items));
            }
            items.push(self.value()?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(c) if *c == close => {}
                Some(c) => return Err(format!("expected ',' or '{}' at position {}, found '{}'", close as char, self.i, *c as char)),
                None => return Err("unterminated list".into()),
            }
        }
    }

    fn string(&mut self) -> Result<PyVal, String> {
        let quote = self.s[self.i];
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != quote {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err("unterminated string".into());
        }
        let out = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(PyVal::Str(out))
    }

    fn int(&mut self) -> Result<PyVal, String> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        while self.i < self.s.len() && self.s[self.i].is_ascii_digit() {
            self.i += 1;
        }
        let text = std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())?;
        text.parse().map(PyVal::Int).map_err(|_| format!("bad integer '{text}'"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_neusight_op_lists() {
        let v = parse("[['Linear', (4096, 1280, 3840)], ['MEM', ((1,), (4, 2))]]").unwrap();
        let ops = v.as_seq().unwrap();
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0].as_seq().unwrap()[0].as_str(), Some("Linear"));
        assert_eq!(ops[1].as_seq().unwrap()[1].as_seq().unwrap()[1].as_seq().unwrap()[1].as_int(), Some(2));
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("[['Linear', (4096,").is_err());
        assert!(parse("[x]").is_err());
        assert!(parse("[1] 2").is_err());
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(parse(&deep).unwrap_err().contains("nested deeper"));
        let ok = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert!(parse(&ok).is_ok());
    }
}
