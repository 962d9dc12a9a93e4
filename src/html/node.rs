//! A report's JSON as an ordered tree: the fields in the order `--json` prints them (serde_json's
//! own `Value` sorts object keys unless a crate-wide feature is switched on), each number kept
//! as the JSON text `--json` prints, so the page shows the same numbers.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;
use std::fmt;

/// One JSON value; objects keep their keys in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Num(Number),
    Str(String),
    Arr(Vec<Node>),
    Obj(Vec<(String, Node)>),
}

impl Node {
    /// The JSON `--json` would print for `value`, as a tree.
    pub fn of<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Node> {
        Node::parse(&crate::json::to_json(value)?)
    }

    /// Parses JSON text.
    pub fn parse(text: &str) -> serde_json::Result<Node> {
        serde_json::from_str(text)
    }

    /// The field `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn num(&self) -> Option<f64> {
        match self {
            Node::Num(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn arr(&self) -> &[Node] {
        match self {
            Node::Arr(items) => items,
            _ => &[],
        }
    }

    pub fn fields(&self) -> &[(String, Node)] {
        match self {
            Node::Obj(fields) => fields,
            _ => &[],
        }
    }

    /// A number, a string, a bool or null.
    pub fn is_scalar(&self) -> bool {
        !matches!(self, Node::Arr(_) | Node::Obj(_))
    }

    /// The number at `key`, or the text of a string field (for labels).
    pub fn num_at(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Node::num)
    }

    pub fn str_at(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::str)
    }

    /// Compact JSON text of this node.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write_json(&mut out);
        out
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Node::Null => out.push_str("null"),
            Node::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Node::Num(n) => out.push_str(&n.to_string()),
            Node::Str(s) => out.push_str(&serde_json::Value::String(s.clone()).to_string()),
            Node::Arr(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write_json(out);
                }
                out.push(']');
            }
            Node::Obj(fields) => {
                out.push('{');
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::String(k.clone()).to_string());
                    out.push(':');
                    v.write_json(out);
                }
                out.push('}');
            }
        }
    }
}

/// The JSON pointer (RFC 6901) of `key` below `parent`.
pub fn pointer(parent: &str, key: &str) -> String {
    format!("{parent}/{}", key.replace('~', "~0").replace('/', "~1"))
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Num(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Num(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Number::from_f64(v).map_or(Node::Null, Node::Num))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Str(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::Str(v))
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Arr(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Node>()? {
            fields.push((k, v));
        }
        Ok(Node::Obj(fields))
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Node, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_key_order_and_number_text() {
        let n = Node::parse(r#"{"z": 1, "a": [0.1, -2, 3.0e20], "m": {"b": null, "a": "x/y"}}"#).unwrap();
        let keys: Vec<&str> = n.fields().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "m"]);
        assert_eq!(n.to_json(), r#"{"z":1,"a":[0.1,-2,3e+20],"m":{"b":null,"a":"x/y"}}"#);
        assert_eq!(pointer("/m", "a/b~c"), "/m/a~1b~0c");
    }
}
