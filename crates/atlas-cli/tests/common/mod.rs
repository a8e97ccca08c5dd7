//! Test support shared by the `atlas pilot` CLI tests: a canned OpenAI-compatible server, and a
//! scripted one whose every answer the test chooses.

// Each test file uses part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::json;

/// What a canned server tells the test: its base URL (`http://127.0.0.1:PORT/v1`), the count of
/// POSTs it received and every `authorization` header line it saw.
pub type Canned = (String, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>);

/// One scripted answer: the status line (`429 Too Many Requests`), extra header lines (each ending
/// in `\r\n`) and the JSON body.
pub struct Reply {
    pub status: String,
    pub headers: String,
    pub body: String,
}

/// A chat completion whose content is `text` (usage 10 prompt / 5 completion tokens).
pub fn completion_reply(text: &str) -> Reply {
    Reply {
        status: "200 OK".into(),
        headers: String::new(),
        body: json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 5}, "model": "canned"})
        .to_string(),
    }
}

/// A canned OpenAI-compatible server on 127.0.0.1: the first POST gets `429 Too Many Requests` with
/// `Retry-After: 1`, every other POST a chat completion whose content is `reply(request body)` (usage
/// 10 prompt / 5 completion tokens). Keep-alive connections are served until the client closes them.
pub fn canned_server(reply: fn(&str) -> &'static str) -> Canned {
    scripted_server(move |n, body| {
        if n == 0 {
            Reply {
                status: "429 Too Many Requests".into(),
                headers: "Retry-After: 1\r\n".into(),
                body: json!({"error": {"message": "slow down", "type": "rate_limit_error"}})
                    .to_string(),
            }
        } else {
            completion_reply(reply(body))
        }
    })
}

/// A scripted server on 127.0.0.1 (a free port): POST number `n` (from 0) with request body `body`
/// gets `respond(n, body)`. Keep-alive connections are served until the client closes them.
pub fn scripted_server(respond: impl Fn(usize, &str) -> Reply + Send + Sync + 'static) -> Canned {
    let respond = Arc::new(respond);
    let listener = TcpListener::bind("127.0.0.1:0").expect("binds");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let posts = Arc::new(AtomicUsize::new(0));
    let auth = Arc::new(Mutex::new(Vec::new()));
    let (p, a) = (Arc::clone(&posts), Arc::clone(&auth));
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let (p, a, respond) = (Arc::clone(&p), Arc::clone(&a), Arc::clone(&respond));
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
                let Reply {
                    status,
                    headers: extra,
                    body: payload,
                } = respond(n, &body);
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
