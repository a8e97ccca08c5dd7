//! Test support shared by the `atlas pilot` CLI tests: a canned OpenAI-compatible server.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::json;

/// What a canned server tells the test: its base URL (`http://127.0.0.1:PORT/v1`), the count of
/// POSTs it received and every `authorization` header line it saw.
pub type Canned = (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>);

/// A canned OpenAI-compatible server on 127.0.0.1: the first POST gets `429 Too Many Requests` with
/// `Retry-After: 1`, every other POST a chat completion whose content is `reply(request body)` (usage
/// 10 prompt / 5 completion tokens). Keep-alive connections are served until the client closes them.
pub fn canned_server(reply: fn(&str) -> &'static str) -> Canned {
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let posts = Arc::new(AtomicUsize::new(0));
    let auth = Arc::new(Mutex::new(Vec::new()));
    let (p, a) = (Arc::clone(&posts), Arc::clone(&auth));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (p, a) = (Arc::clone(&p), Arc::clone(&a));
            thread::spawn(move || loop {
                let mut reader = BufReader::new(&mut stream);
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let mut length = 0usize;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 {
                        return;
                    }
                    let h = h.trim_end().to_string();
                    if h.is_empty() {
                        break;
                    }
                    let lower = h.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if lower.starts_with("authorization:") {
                        a.lock().expect("lock").push(h.clone());
                    }
                }
                let mut body = vec![0u8; length];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let body = String::from_utf8_lossy(&body).to_string();
                let n = p.fetch_add(1, Ordering::SeqCst);
                let (status, extra, payload) = if n == 0 {
                    (
                        "429 Too Many Requests",
                        "Retry-After: 1\r\n",
                        json!({"error": {"message": "slow down", "type": "rate_limit_error"}}),
                    )
                } else {
                    (
                        "200 OK",
                        "",
                        json!({"choices": [{"message": {"role": "assistant", "content": reply(&body)}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5}, "model": "canned"}),
                    )
                };
                let payload = payload.to_string();
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n{payload}",
                    payload.len()
                );
                if stream.write_all(response.as_bytes()).is_err() {
                    return;
                }
            });
        }
    });
    (url, posts, auth)
}
