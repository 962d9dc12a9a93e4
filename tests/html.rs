//! `--html FILE`: the page is well formed, references nothing outside itself, and every number
//! of the answer in it is the `--json` answer's number for the same request.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

fn wavecast(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavecast")).args(args).output().expect("run wavecast")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Elements that never have a closing tag in HTML.
const VOID: [&str; 8] = ["meta", "br", "hr", "img", "input", "link", "col", "wbr"];

/// Checks the tags of `html` nest: every element opened is closed in order (void elements and
/// `<x/>` excepted), attribute values are quoted, no `<` or `>` stands loose in text, and the
/// contents of `<style>` hold no tag. Returns the names of the elements opened, in order.
fn check_well_formed(html: &str) -> Vec<String> {
    let mut stack: Vec<String> = Vec::new();
    let mut opened = Vec::new();
    let mut rest = html.strip_prefix("<!DOCTYPE html>").expect("starts with the doctype");
    while let Some(lt) = rest.find('<') {
        assert!(!rest[..lt].contains('>'), "a loose '>' in text before: {}", &rest[lt..(lt + 80).min(rest.len())]);
        let after = &rest[lt + 1..];
        let end = tag_end(after).unwrap_or_else(|| panic!("unclosed tag at: {}", &after[..after.len().min(80)]));
        let tag = &after[..end];
        rest = &after[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim().to_ascii_lowercase();
            let top = stack.pop().unwrap_or_else(|| panic!("</{name}> closes nothing"));
            assert_eq!(top, name, "</{name}> closes <{top}>");
            continue;
        }
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect::<String>().to_ascii_lowercase();
        assert!(!name.is_empty(), "not a tag: <{tag}>");
        check_attributes(tag);
        opened.push(name.clone());
        if tag.ends_with('/') || VOID.contains(&name.as_str()) {
            continue;
        }
        if name == "style" {
            let close = rest.find("</style>").expect("</style>");
            assert!(!rest[..close].contains('<'), "a tag inside <style>");
            rest = &rest[close + "</style>".len()..];
            continue;
        }
        stack.push(name);
    }
    assert!(!rest.contains('>'), "a loose '>' after the last tag");
    assert!(stack.is_empty(), "left open: {stack:?}");
    opened
}

/// Where the tag starting at `s` ends (its `>`), skipping quoted attribute values.
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') => panic!("'<' inside a tag: {}", &s[..i]),
            _ => {}
        }
    }
    None
}

/// Every `name=value` in a tag has its value in double quotes.
fn check_attributes(tag: &str) {
    let mut in_quote = false;
    let bytes = tag.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' {
            in_quote = !in_quote;
        } else if b == b'=' && !in_quote {
            assert_eq!(bytes.get(i + 1), Some(&b'"'), "unquoted attribute in <{tag}>");
        }
    }
    assert!(!in_quote, "unbalanced quotes in <{tag}>");
}

/// Nothing the page would fetch: no URL, script, stylesheet link, image, font or frame.
fn check_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for needle in ["http", "<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "@font-face", "//"] {
        assert!(!lower.contains(needle), "the page holds {needle:?}");
    }
}

/// The value of attribute `name` in the tag text `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// Every number of the answer the page shows: its JSON pointer, exact text and, for numbers
/// shown as text, the text shown.
fn numbers(html: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(" data-json=\"") {
        let tag_start = rest[..i].rfind('<').unwrap();
        let tag_len = tag_end(&rest[tag_start + 1..]).unwrap();
        let tag = &rest[tag_start..tag_start + 1 + tag_len];
        let pointer = attribute(tag, "data-json").unwrap().replace("&quot;", "\"").replace("&amp;", "&");
        let exact = attribute(tag, "data-exact").expect("data-exact beside data-json").to_string();
        let after = &rest[tag_start + 2 + tag_len..];
        let shown = tag.starts_with("<span").then(|| after[..after.find('<').unwrap()].to_string());
        out.push((pointer, exact, shown));
        rest = after;
    }
    out
}

/// The JSON pointers of every number in `v`.
fn number_pointers(v: &Value, at: String, out: &mut BTreeSet<String>) {
    match v {
        Value::Number(_) => {
            out.insert(at);
        }
        Value::Array(items) => items.iter().enumerate().for_each(|(i, x)| number_pointers(x, format!("{at}/{i}"), out)),
        Value::Object(map) => map.iter().for_each(|(k, x)| number_pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)),
        _ => {}
    }
}

/// The shown text is the exact number rounded: within half a unit of its last digit.
fn check_rounding(shown: &str, exact: f64) {
    let value: f64 = shown.parse().unwrap_or_else(|_| panic!("shown number {shown:?} does not parse"));
    let (mantissa, exponent) = match shown.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap()),
        None => (shown, 0),
    };
    let decimals = mantissa.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let half_unit = 0.5 * 10f64.powi(exponent - decimals);
    assert!((value - exact).abs() <= half_unit * (1.0 + 1e-9) + exact.abs() * 1e-15, "shown {shown} is not {exact} rounded");
}

/// Runs `args` with `--json` and again with `--html`, and checks the page against the answer.
fn check_page(args: &[&str], dir: &Path, name: &str) -> String {
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let o = wavecast(&json_args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let answer: Value = serde_json::from_slice(&o.stdout).expect("--json is JSON");
    let path = dir.join(name);
    let mut html_args = args.to_vec();
    html_args.extend(["--html", path.to_str().unwrap()]);
    let o = wavecast(&html_args);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let html = std::fs::read_to_string(&path).expect("the page was written");
    let elements = check_well_formed(&html);
    check_self_contained(&html);
    assert!(elements.iter().any(|e| e == "svg") || args[0] == "eval", "{args:?}: no chart");
    assert!(html.contains(&format!("wavecast {}", env!("CARGO_PKG_VERSION"))), "the page names the version");
    assert!(html.contains("<h3>Inputs</h3>") && html.contains(&format!("wavecast {}", args.join(" "))), "the page shows the command");
    let shown = numbers(&html);
    let mut seen = BTreeSet::new();
    for (pointer, exact, text) in &shown {
        let v = answer.pointer(pointer).unwrap_or_else(|| panic!("{args:?}: {pointer} is not in the --json answer"));
        assert!(v.is_number(), "{pointer} is {v}, not a number");
        assert_eq!(&v.to_string(), exact, "{args:?}: {pointer}");
        if let Some(text) = text {
            check_rounding(text, v.as_f64().unwrap());
        }
        seen.insert(pointer.clone());
    }
    let mut all = BTreeSet::new();
    number_pointers(&answer, String::new(), &mut all);
    let missing: Vec<&String> = all.difference(&seen).collect();
    assert!(missing.is_empty(), "{args:?}: numbers of the answer not on the page: {missing:?}");
    html
}

#[test]
fn every_report_page_is_well_formed_self_contained_and_shows_the_json_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let runs: [(&str, &[&str]); 7] = [
        ("predict.html", &["predict", "--model", "gpt2-large", "--gpu", "h100", "--batch", "4", "--mode", "train"]),
        ("serve.html", &["predict", "--model", "qwen2.5-7b", "--gpu", "h100", "--mode", "serve", "--batch", "8", "--input-len", "1000", "--output-len", "100"]),
        ("train.html", &["predict", "--model", "gpt2-large", "--gpu", "h100", "--batch", "16", "--mode", "train", "--dp", "2", "--tp", "2", "--pp", "2", "--micro-batch", "2"]),
        ("plan_train.html", &["plan", "train", "--model", "gpt2", "--gpu", "h100", "--gpus", "8", "--batch", "32", "--top", "3"]),
        ("serve_sim.html", &["serve-sim", "--model", "llama-3-8b", "--gpu", "h100", "--concurrency", "4", "--requests", "32", "--slo-tpot", "50"]),
        ("plan_serve.html", &["plan", "serve", "--model", "qwen2.5-7b", "--gpu", "h100", "--gpus", "2", "--concurrency", "4,16", "--slo-tpot", "40"]),
        ("compare.html", &["compare", "--model", "qwen2.5-7b", "--gpus", "h100,l40s", "--tp", "1,2", "--input-len", "1000", "--output-len", "100"]),
    ];
    for (name, args) in runs {
        check_page(args, dir.path(), name);
    }
}

/// The accuracy reports on NeuSight's data (`../shared`; skipped without it).
#[test]
fn eval_pages_show_the_json_numbers_and_predicted_against_measured() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/neusight");
    if !data.join("label").is_dir() {
        eprintln!("skipped: no {}", data.display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let data = data.to_str().unwrap();
    let e2e = check_page(&["eval", "e2e", "--data", data, "--predictor", "roofline"], dir.path(), "e2e.html");
    assert!(e2e.contains("End-to-end time: predicted against measured") && e2e.contains(r#"class="diagonal""#), "the scatter with y = x");
    let conv = check_page(&["eval", "conv", "--data", data], dir.path(), "conv.html");
    assert!(conv.contains("Mean APE per GPU and method"));
    let ops = check_page(&["eval", "ops", "--data", data, "--test-gpu", "t4", "--predictor", "roofline"], dir.path(), "ops.html");
    assert!(ops.contains("Mean APE by family"));
}

#[test]
fn the_predict_page_shows_the_interval_and_the_charts_have_axes_and_hover_details() {
    let dir = tempfile::tempdir().unwrap();
    let html = check_page(&["predict", "--model", "gpt2", "--gpu", "a100", "--batch", "2"], dir.path(), "p.html");
    assert!(html.contains("interval <span"), "the step time's interval is shown");
    assert!(html.contains(r#"class="axis x-axis""#) && html.contains("<title>gemm: "), "bars with axes and hover titles");
    assert!(html.contains("Time by op class"));
}

#[test]
fn a_page_into_a_missing_folder_or_onto_a_folder_is_refused_before_any_work() {
    let o = wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--html", "/nonexistent-folder/x.html"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("folder /nonexistent-folder does not exist") && err.lines().count() == 1, "{err}");
    // A folder where the page should go is named as such, before the model is built (no note).
    let dir = tempfile::tempdir().unwrap();
    let o = wavecast(&["predict", "--model", "gpt2", "--gpu", "h100", "--html", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("it is a folder; name a file in it") && err.lines().count() == 1, "{err}");
}

#[test]
fn the_renderer_shows_provenance_and_escapes_what_it_is_given() {
    let report = r#"{"model":"<m>","gpu":"h100","rows":[{"ms":1.5,"provenance":"transfer from a100","interval_ms":[1.25,2.0]}]}"#;
    let inputs = r#"{"model":"<m>"}"#;
    let page = wavecast::html::page_from_json(wavecast::html::Kind::Predict, inputs, report).unwrap();
    check_well_formed(&page);
    check_self_contained(&page);
    assert!(page.contains(r#"<span class="prov">transfer from a100</span>"#), "provenance as a badge");
    assert!(page.contains(r#"data-exact="1.25" title="1.25">1.250</span> – <span"#), "an interval as a range");
    assert!(page.contains("&lt;m&gt;") && !page.contains("<m>"), "names escaped");
    assert!(wavecast::html::Kind::from_name("nope").unwrap_err().to_string().contains("unknown report kind"));
}

/// `wavecast ui`, started on a free loopback port and stopped when the test ends.
#[cfg(feature = "ui")]
mod ui {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;
    use std::process::{Child, Stdio};
    use std::time::Duration;

    struct Server {
        child: Child,
        addr: String,
    }

    impl Server {
        fn start() -> Server {
            let mut child = Command::new(env!("CARGO_BIN_EXE_wavecast")).args(["ui", "--port", "0"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("start wavecast ui");
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("the server's first line");
            let addr = line.split("http://").nth(1).and_then(|s| s.split('/').next()).unwrap_or_else(|| panic!("no address in {line:?}")).to_string();
            assert!(addr.starts_with("127.0.0.1:"), "{addr}");
            Server { child, addr }
        }

        /// One request with `Connection: close`; the status and the body.
        fn request(&self, method: &str, path: &str, form: Option<&str>) -> (u16, String) {
            let mut s = TcpStream::connect(&self.addr).expect("connect");
            s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
            s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
            let body = form.unwrap_or("");
            let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n", self.addr);
            if form.is_some() {
                req += &format!("Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n", body.len());
            }
            req += "\r\n";
            req += body;
            s.write_all(req.as_bytes()).unwrap();
            let mut response = String::new();
            s.read_to_string(&mut response).expect("read the response");
            let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
            let status = head.split(' ').nth(1).and_then(|c| c.parse().ok()).expect("a status code");
            (status, body.to_string())
        }
    }

    impl Drop for Server {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn unescape(s: &str) -> String {
        s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'").replace("&amp;", "&")
    }

    #[test]
    fn the_local_page_answers_its_routes_with_the_cli_numbers_and_messages() {
        let server = Server::start();
        let (status, index) = server.request("GET", "/", None);
        assert_eq!(status, 200);
        check_well_formed(&index);
        for route in ["/predict", "/serve", "/serve-sim", "/compare", "/plan-train", "/plan-serve"] {
            assert!(index.contains(&format!("href=\"{route}\"")), "the index links {route}");
        }
        let (status, form) = server.request("GET", "/serve-sim", None);
        assert_eq!(status, 200);
        check_well_formed(&form);
        assert!(form.contains(r#"<form class="ask" method="post" action="/serve-sim">"#) && form.contains(r#"<option value="llama-3-8b""#), "a form with the presets");
        assert!(!form.to_ascii_lowercase().contains("http") && !form.contains("<script"), "nothing fetched");

        let (status, page) = server.request("POST", "/predict", Some("model=gpt2&config=&gpu=a100&mode=train&batch=2&seq=512&dtype=&predictor="));
        assert_eq!(status, 200, "{page}");
        check_well_formed(&page);
        let o = wavecast(&["predict", "--model", "gpt2", "--gpu", "a100", "--mode", "train", "--batch", "2", "--seq", "512", "--json"]);
        let answer: Value = serde_json::from_slice(&o.stdout).unwrap();
        let shown = numbers(&page);
        assert!(shown.iter().any(|(p, _, _)| p == "/total_ms"), "the step time is on the page");
        for (pointer, exact, _) in shown {
            assert_eq!(answer.pointer(&pointer).map(Value::to_string).as_deref(), Some(exact.as_str()), "{pointer}");
        }

        let (status, page) = server.request("POST", "/predict", Some("model=gpt2&gpu=nonesuch&mode=inference&batch=1&seq=128"));
        assert_eq!(status, 422);
        let cli = wavecast(&["predict", "--model", "gpt2", "--gpu", "nonesuch", "--batch", "1", "--seq", "128"]);
        let message = stderr(&cli).trim().to_string();
        assert!(message.starts_with("wavecast: error: ") && unescape(&page).contains(&message), "the CLI's message {message:?} in the page");

        let (status, page) = server.request("POST", "/serve", Some("model=&config=%7Bnot+json&gpu=h100&batch=x"));
        assert_eq!(status, 422);
        assert!(page.contains("must be a whole number") || page.contains("config.json is not JSON"), "{page}");
        let (status, page) = server.request("GET", "/serve?model=qwen2.5-7b&gpu=h100&batch=2&input_len=256&output_len=32", None);
        assert_eq!(status, 200, "a query string is answered as a submitted form");
        assert!(page.contains(r#"data-kind="serve""#) && page.contains("One decode step by part"), "the serve report");
        assert_eq!(server.request("GET", "/nowhere", None).0, 404);
    }

    #[test]
    fn the_local_page_refuses_other_interfaces_unless_asked() {
        let o = wavecast(&["ui", "--host", "0.0.0.0", "--port", "0"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("refusing to serve on 0.0.0.0") && stderr(&o).contains("--allow-remote"), "{}", stderr(&o));
    }
}
