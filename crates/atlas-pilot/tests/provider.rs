//! Request building and response parsing per provider, against the shapes in each provider's public
//! API reference. Every expected body, header list and example response below is written by hand
//! from the reference pages cited next to it, not produced by the code under test.

use atlas_pilot::http_date::parse_http_date;
use atlas_pilot::provider::{
    build_request, parse_response, parse_retry_after, Completion, Params, Prompt, Provider,
    ProviderError, RequestError, RetryAfter, SecretKey, Usage,
};
use serde_json::{json, Value};

fn prompt() -> Prompt {
    Prompt {
        system: "You are a sociologist.".into(),
        user: "Do you agree with this statement?".into(),
    }
}

fn params() -> Params {
    Params {
        temperature: 0.0,
        max_tokens: 128,
    }
}

fn key() -> SecretKey {
    SecretKey::new("sk-test-DO-NOT-LEAK")
}

fn body(req: &atlas_pilot::HttpRequest) -> Value {
    serde_json::from_str(&req.body).expect("the body is JSON")
}

fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

// --- request building -------------------------------------------------------------------------

/// OpenAI "Create chat completion": `POST https://api.openai.com/v1/chat/completions`,
/// `Authorization: Bearer $OPENAI_API_KEY`, body `{"model", "messages": [{"role", "content"}], …}`
/// (https://platform.openai.com/docs/api-reference/chat/create).
#[test]
fn an_openai_request_posts_chat_completions_with_a_bearer_key_and_system_then_user_messages() {
    let req = build_request(
        &Provider::openai("gpt-4o-mini"),
        &prompt(),
        &params(),
        &key(),
    )
    .unwrap();
    assert_eq!(req.method, "POST");
    assert_eq!(req.url, "https://api.openai.com/v1/chat/completions");
    assert_eq!(
        req.headers,
        headers(&[
            ("content-type", "application/json"),
            ("authorization", "Bearer sk-test-DO-NOT-LEAK"),
        ])
    );
    let expected = json!({
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a sociologist."},
            {"role": "user", "content": "Do you agree with this statement?"}
        ],
        "temperature": 0.0,
        "max_tokens": 128
    });
    assert_eq!(body(&req), expected);
}

#[test]
fn an_openai_compatible_local_server_gets_no_authorization_header_and_no_system_message_when_both_are_empty(
) {
    let provider = Provider::OpenAiCompatible {
        base_url: "http://127.0.0.1:8000/v1/".into(),
        model: "smollm2".into(),
    };
    let p = Prompt {
        system: "  ".into(),
        user: "Hi".into(),
    };
    let req = build_request(&provider, &p, &params(), &SecretKey::new("")).unwrap();
    assert_eq!(req.url, "http://127.0.0.1:8000/v1/chat/completions");
    assert_eq!(
        req.headers,
        headers(&[("content-type", "application/json")])
    );
    assert_eq!(
        body(&req),
        json!({"model": "smollm2", "messages": [{"role": "user", "content": "Hi"}], "temperature": 0.0, "max_tokens": 128})
    );
}

/// Anthropic "Messages": `POST https://api.anthropic.com/v1/messages`, headers `x-api-key`,
/// `anthropic-version: 2023-06-01`, `content-type: application/json`; body `{"model", "max_tokens",
/// "system", "messages": [{"role": "user", "content"}], "temperature"}`
/// (https://docs.anthropic.com/en/api/messages). Direct browser access needs
/// `anthropic-dangerous-direct-browser-access: true` (Anthropic's CORS support, announced Aug 2024:
/// https://simonwillison.net/2024/Aug/23/anthropic-dangerous-direct-browser-access/).
#[test]
fn an_anthropic_request_posts_messages_with_x_api_key_version_and_direct_browser_access_headers() {
    let provider = Provider::anthropic("claude-3-5-haiku-latest");
    let req = build_request(&provider, &prompt(), &params(), &key()).unwrap();
    assert_eq!(req.url, "https://api.anthropic.com/v1/messages");
    assert_eq!(
        req.headers,
        headers(&[
            ("content-type", "application/json"),
            ("x-api-key", "sk-test-DO-NOT-LEAK"),
            ("anthropic-version", "2023-06-01"),
            ("anthropic-dangerous-direct-browser-access", "true"),
        ])
    );
    assert_eq!(
        body(&req),
        json!({
            "model": "claude-3-5-haiku-latest",
            "max_tokens": 128,
            "system": "You are a sociologist.",
            "messages": [{"role": "user", "content": "Do you agree with this statement?"}],
            "temperature": 0.0
        })
    );
}

/// Gemini `models.generateContent`: `POST
/// https://generativelanguage.googleapis.com/v1beta/{model=models/*}:generateContent`, key in the
/// `x-goog-api-key` header (https://ai.google.dev/api#authentication), body `{"systemInstruction":
/// {"parts": [{"text"}]}, "contents": [{"role": "user", "parts": [{"text"}]}], "generationConfig":
/// {"temperature", "maxOutputTokens"}}` (https://ai.google.dev/api/generate-content).
#[test]
fn a_gemini_request_posts_generate_content_with_the_key_in_a_header_never_in_the_url() {
    let req = build_request(
        &Provider::gemini("models/gemini-2.0-flash"),
        &prompt(),
        &params(),
        &key(),
    )
    .unwrap();
    assert_eq!(
        req.url,
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.0-flash:generateContent"
    );
    assert!(!req.url.contains("key="));
    assert!(!req.url.contains("sk-test"));
    assert_eq!(
        req.headers,
        headers(&[
            ("content-type", "application/json"),
            ("x-goog-api-key", "sk-test-DO-NOT-LEAK"),
        ])
    );
    assert_eq!(
        body(&req),
        json!({
            "systemInstruction": {"parts": [{"text": "You are a sociologist."}]},
            "contents": [{"role": "user", "parts": [{"text": "Do you agree with this statement?"}]}],
            "generationConfig": {"temperature": 0.0, "maxOutputTokens": 128}
        })
    );
}

#[test]
fn a_gemini_model_name_is_percent_encoded_in_the_path() {
    let req = build_request(
        &Provider::gemini("my model/x"),
        &prompt(),
        &params(),
        &key(),
    )
    .unwrap();
    assert!(req
        .url
        .ends_with("/v1beta/models/my%20model%2Fx:generateContent"));
}

#[test]
fn requests_that_cannot_be_sent_are_refused_with_a_reason_that_never_shows_the_key() {
    let k = key();
    let cases: Vec<(Provider, Prompt, Params, SecretKey, RequestError)> = vec![
        (
            Provider::anthropic("m"),
            prompt(),
            params(),
            SecretKey::new(""),
            RequestError::MissingKey {
                provider: "Anthropic",
            },
        ),
        (
            Provider::gemini("m"),
            prompt(),
            params(),
            SecretKey::new(""),
            RequestError::MissingKey { provider: "Gemini" },
        ),
        (
            Provider::openai(""),
            prompt(),
            params(),
            k.clone(),
            RequestError::EmptyModel,
        ),
        (
            Provider::anthropic("m"),
            prompt(),
            Params {
                temperature: 1.5,
                max_tokens: 10,
            },
            k.clone(),
            RequestError::BadTemperature {
                value: 1.5,
                max: 1.0,
                provider: "Anthropic",
            },
        ),
        (
            Provider::openai("m"),
            prompt(),
            Params {
                temperature: 0.0,
                max_tokens: 0,
            },
            k.clone(),
            RequestError::ZeroMaxTokens,
        ),
        (
            Provider::openai("m"),
            Prompt {
                system: String::new(),
                user: " ".into(),
            },
            params(),
            k.clone(),
            RequestError::EmptyUserPrompt,
        ),
        (
            Provider::openai("m"),
            prompt(),
            params(),
            SecretKey::new("sk-a\u{7f}b"),
            RequestError::KeyNotHeaderSafe,
        ),
    ];
    for (provider, p, par, key, expected) in cases {
        let err = build_request(&provider, &p, &par, &key).unwrap_err();
        assert_eq!(err, expected);
        assert!(!err.to_string().contains("sk-test"));
    }
    let bad_url = Provider::OpenAiCompatible {
        base_url: "ftp://example.org/v1".into(),
        model: "m".into(),
    };
    assert!(matches!(
        build_request(&bad_url, &prompt(), &params(), &k),
        Err(RequestError::BadBaseUrl { .. })
    ));
    let with_query = Provider::OpenAiCompatible {
        base_url: "https://example.org/v1?key=x".into(),
        model: "m".into(),
    };
    assert!(matches!(
        build_request(&with_query, &prompt(), &params(), &k),
        Err(RequestError::BadBaseUrl { .. })
    ));
}

// --- keys never in Debug ------------------------------------------------------------------------

#[test]
fn a_secret_key_prints_three_stars_in_debug_and_display_and_a_request_masks_its_credential_headers()
{
    let k = key();
    assert_eq!(format!("{k:?}"), "***");
    assert_eq!(format!("{k}"), "***");
    assert_eq!(k.masked(), "••••LEAK");
    assert_eq!(SecretKey::new("short").masked(), "••••");
    for provider in [
        Provider::openai("m"),
        Provider::anthropic("m"),
        Provider::gemini("m"),
    ] {
        let req = build_request(&provider, &prompt(), &params(), &k).unwrap();
        let debug = format!("{req:?} {:?} {:?}", req.redacted(), provider);
        assert!(!debug.contains("DO-NOT-LEAK"), "{debug}");
        assert!(debug.contains("***"));
        let redacted = serde_json::to_string(&req.redacted()).unwrap();
        assert!(!redacted.contains("DO-NOT-LEAK"));
    }
}

#[test]
fn a_provider_message_that_echoes_the_key_is_scrubbed() {
    let body = r#"{"error": {"message": "Incorrect API key provided: sk-test-DO-NOT-LEAK.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}"#;
    let err = parse_response(&Provider::openai("m"), 401, &[], body).unwrap_err();
    let scrubbed = err.scrubbed(&key());
    assert!(!scrubbed.to_string().contains("DO-NOT-LEAK"));
    assert!(scrubbed
        .to_string()
        .contains("Incorrect API key provided: ***."));
}

/// Found by `tests/fuzz.rs`: a string `code` (read as the error kind when there is no `type`) that
/// echoes the key was kept as is by `scrubbed`, and `Display` prints the kind.
#[test]
fn an_error_kind_that_echoes_the_key_is_scrubbed() {
    let body = r#"{"error": {"message": "Invalid API key.", "type": null, "code": "invalid_key:sk-test-DO-NOT-LEAK"}}"#;
    for status in [401, 503] {
        let err = parse_response(&Provider::openai("m"), status, &[], body).unwrap_err();
        let scrubbed = err.scrubbed(&key());
        assert!(!scrubbed.to_string().contains("DO-NOT-LEAK"));
        assert!(!format!("{scrubbed:?}").contains("DO-NOT-LEAK"));
        assert!(scrubbed.to_string().contains("invalid_key:***"));
    }
}

// --- successful responses --------------------------------------------------------------------

/// The chat completion object of https://platform.openai.com/docs/api-reference/chat/object.
#[test]
fn an_openai_chat_completion_object_gives_text_finish_reason_usage_and_model() {
    let body = r#"{
      "id": "chatcmpl-123",
      "object": "chat.completion",
      "created": 1677652288,
      "model": "gpt-4o-mini",
      "system_fingerprint": "fp_44709d6fcb",
      "choices": [{
        "index": 0,
        "message": {"role": "assistant", "content": "\n\nHello there, how may I assist you today?"},
        "logprobs": null,
        "finish_reason": "stop"
      }],
      "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21}
    }"#;
    let c = parse_response(&Provider::openai("gpt-4o-mini"), 200, &[], body).unwrap();
    assert_eq!(
        c,
        Completion {
            text: "\n\nHello there, how may I assist you today?".into(),
            finish_reason: Some("stop".into()),
            usage: Usage {
                input_tokens: Some(9),
                output_tokens: Some(12)
            },
            model: Some("gpt-4o-mini".into()),
        }
    );
}

#[test]
fn an_openai_refusal_with_null_content_gives_the_refusal_text() {
    let body = r#"{"choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "I'm sorry, I cannot assist with that request."}, "finish_reason": "stop"}]}"#;
    let c = parse_response(&Provider::openai("m"), 200, &[], body).unwrap();
    assert_eq!(c.text, "I'm sorry, I cannot assist with that request.");
    assert_eq!(c.usage, Usage::default());
}

/// The example response of https://docs.anthropic.com/en/api/messages.
#[test]
fn an_anthropic_message_gives_the_concatenated_text_blocks_stop_reason_and_usage() {
    let body = r#"{
      "content": [{"text": "Hi! My name is Claude.", "type": "text"}],
      "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
      "model": "claude-3-5-sonnet-20241022",
      "role": "assistant",
      "stop_reason": "end_turn",
      "stop_sequence": null,
      "type": "message",
      "usage": {"input_tokens": 2095, "output_tokens": 503}
    }"#;
    let c = parse_response(&Provider::anthropic("m"), 200, &[], body).unwrap();
    assert_eq!(c.text, "Hi! My name is Claude.");
    assert_eq!(c.finish_reason.as_deref(), Some("end_turn"));
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: Some(2095),
            output_tokens: Some(503)
        }
    );
    assert_eq!(c.model.as_deref(), Some("claude-3-5-sonnet-20241022"));
}

/// `GenerateContentResponse` of https://ai.google.dev/api/generate-content#v1beta.GenerateContentResponse.
#[test]
fn a_gemini_response_gives_the_text_parts_finish_reason_usage_and_model_version() {
    let body = r#"{
      "candidates": [{
        "content": {"parts": [{"text": "Selection: NO\n"}, {"text": "Rationale: It is a stereotype."}], "role": "model"},
        "finishReason": "STOP",
        "index": 0,
        "safetyRatings": [{"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"}]
      }],
      "usageMetadata": {"promptTokenCount": 8, "candidatesTokenCount": 10, "totalTokenCount": 18},
      "modelVersion": "gemini-2.0-flash"
    }"#;
    let c = parse_response(&Provider::gemini("m"), 200, &[], body).unwrap();
    assert_eq!(c.text, "Selection: NO\nRationale: It is a stereotype.");
    assert_eq!(c.finish_reason.as_deref(), Some("STOP"));
    assert_eq!(
        c.usage,
        Usage {
            input_tokens: Some(8),
            output_tokens: Some(10)
        }
    );
    assert_eq!(c.model.as_deref(), Some("gemini-2.0-flash"));
}

#[test]
fn a_gemini_prompt_block_is_an_empty_completion_that_names_the_block_reason() {
    let body = r#"{"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []}, "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12}}"#;
    let c = parse_response(&Provider::gemini("m"), 200, &[], body).unwrap();
    assert_eq!(c.text, "");
    assert_eq!(c.finish_reason.as_deref(), Some("prompt_blocked:SAFETY"));
    assert_eq!(c.usage.input_tokens, Some(12));
}

// --- errors ----------------------------------------------------------------------------------

/// OpenAI error body (https://platform.openai.com/docs/guides/error-codes): `{"error": {"message",
/// "type", "param", "code"}}`; 429 with `retry-after` seconds.
#[test]
fn an_openai_429_is_a_retryable_rate_limit_with_the_providers_message_and_retry_after_seconds() {
    let body = r#"{"error": {"message": "Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.", "type": "requests", "param": null, "code": "rate_limit_exceeded"}}"#;
    let err = parse_response(
        &Provider::openai("m"),
        429,
        &headers(&[("Retry-After", "20")]),
        body,
    )
    .unwrap_err();
    assert_eq!(
        err,
        ProviderError::RateLimited {
            status: 429,
            message: "Rate limit reached for gpt-4o-mini in organization org-x on requests per min (RPM): Limit 3, Used 3, Requested 1.".into(),
            retry_after: Some(RetryAfter::Delay { ms: 20_000 }),
        }
    );
    assert!(err.is_retryable());
    assert!(err
        .to_string()
        .contains("Rate limit reached for gpt-4o-mini"));
    assert!(err.to_string().contains("retry after 20 s"));
}

#[test]
fn a_retry_after_http_date_is_kept_as_a_moment_and_turned_into_a_delay_from_now() {
    let err = parse_response(
        &Provider::openai("m"),
        429,
        &headers(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
        "",
    )
    .unwrap_err();
    let at = RetryAfter::At {
        unix_ms: 784_111_777_000,
        date_unix_ms: None,
    };
    assert_eq!(err.retry_after(), Some(at));
    assert_eq!(at.delay_ms(784_111_770_000), 7_000);
    assert_eq!(at.delay_ms(784_111_790_000), 0);
}

#[test]
fn a_retry_after_http_date_is_measured_against_the_responses_date_header_when_there_is_one() {
    // RFC 9110 §5.6.7's example moment, 784,111,777 s; the server's Date 120 s earlier. The wait is
    // 120 s whatever the client's clock says (here 1 h ahead of the server's).
    let h = headers(&[
        ("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ("Date", "Sun, 06 Nov 1994 08:47:37 GMT"),
    ]);
    let at = parse_retry_after(&h).unwrap();
    assert_eq!(
        at,
        RetryAfter::At {
            unix_ms: 784_111_777_000,
            date_unix_ms: Some(784_111_657_000),
        }
    );
    assert_eq!(at.delay_ms(784_111_657_000 + 3_600_000), 120_000);
    assert_eq!(at.delay_ms(0), 120_000);
    // An unreadable Date is ignored: measured against the client's clock.
    let h = headers(&[
        ("Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ("Date", "yesterday"),
    ]);
    assert_eq!(
        parse_retry_after(&h).unwrap().delay_ms(784_111_767_000),
        10_000
    );
    // A delay in seconds does not use Date.
    let h = headers(&[
        ("Retry-After", "30"),
        ("Date", "Sun, 06 Nov 1994 08:47:37 GMT"),
    ]);
    assert_eq!(
        parse_retry_after(&h),
        Some(RetryAfter::Delay { ms: 30_000 })
    );
    // The error's text says the wait by the server's clock.
    let err = parse_response(
        &Provider::openai("m"),
        429,
        &headers(&[
            ("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ("date", "Sun, 06 Nov 1994 08:47:37 GMT"),
        ]),
        "",
    )
    .unwrap_err();
    assert!(err
        .to_string()
        .contains("(retry after 120 s by the server's clock)"));
}

#[test]
fn retry_after_ms_is_read_before_retry_after() {
    let h = headers(&[("retry-after", "20"), ("retry-after-ms", "1500.2")]);
    assert_eq!(parse_retry_after(&h), Some(RetryAfter::Delay { ms: 1501 }));
    assert_eq!(
        parse_retry_after(&headers(&[("Retry-After", "soon")])),
        None
    );
}

#[test]
fn all_three_http_date_formats_of_rfc_9110_give_the_same_moment() {
    // RFC 9110 §5.6.7's example, 1994-11-06 08:49:37 UTC = 784,111,777 s after the epoch.
    assert_eq!(
        parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(
        parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"),
        Some(784_111_777)
    );
    assert_eq!(
        parse_http_date("Sun Nov  6 08:49:37 1994"),
        Some(784_111_777)
    );
    // 2000-02-29 (a leap day in a year divisible by 400) 00:00:00 = 951,782,400.
    assert_eq!(
        parse_http_date("Tue, 29 Feb 2000 00:00:00 GMT"),
        Some(951_782_400)
    );
    assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
    for bad in [
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 31 Nov 1994 08:49:37 GMT",
        "Mon, 29 Feb 1900 00:00:00 GMT",
        "Sun, 06 Nov 1994 24:00:00 GMT",
        "yesterday",
        "",
    ] {
        assert_eq!(parse_http_date(bad), None, "{bad}");
    }
}

/// Anthropic error body (https://docs.anthropic.com/en/api/errors): `{"type": "error", "error":
/// {"type", "message"}}`; 529 `overloaded_error`.
#[test]
fn an_anthropic_529_overloaded_error_is_a_retryable_server_error_with_its_type_and_message() {
    let body =
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    let err = parse_response(&Provider::anthropic("m"), 529, &[], body).unwrap_err();
    assert_eq!(
        err,
        ProviderError::Server {
            status: 529,
            kind: Some("overloaded_error".into()),
            message: "Overloaded".into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
    assert_eq!(
        err.to_string(),
        "provider server error (HTTP 529, overloaded_error): Overloaded"
    );
}

#[test]
fn an_anthropic_404_not_found_is_a_client_error_that_is_not_retried() {
    let body = r#"{"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}"#;
    let err = parse_response(&Provider::anthropic("m"), 404, &[], body).unwrap_err();
    assert_eq!(
        err,
        ProviderError::Client {
            status: 404,
            kind: Some("not_found_error".into()),
            message: "model: claude-9".into(),
        }
    );
    assert!(!err.is_retryable());
}

/// Gemini errors follow Google's error model (https://ai.google.dev/gemini-api/docs/troubleshooting):
/// `{"error": {"code", "message", "status", "details"}}`; a 429 may carry `google.rpc.RetryInfo`.
#[test]
fn a_gemini_429_takes_its_wait_from_the_retry_info_detail() {
    let body = r#"{"error": {"code": 429, "message": "You exceeded your current quota, please check your plan and billing details.", "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "34s"}]}}"#;
    let err = parse_response(&Provider::gemini("m"), 429, &[], body).unwrap_err();
    assert_eq!(err.retry_after(), Some(RetryAfter::Delay { ms: 34_000 }));
    assert!(err.to_string().contains("You exceeded your current quota"));
}

#[test]
fn a_gemini_400_invalid_key_is_a_client_error_with_status_and_message() {
    let body = r#"{"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.", "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}]}}"#;
    let err = parse_response(&Provider::gemini("m"), 400, &[], body).unwrap_err();
    assert_eq!(
        err,
        ProviderError::Client {
            status: 400,
            kind: Some("INVALID_ARGUMENT".into()),
            message: "API key not valid. Please pass a valid API key.".into(),
        }
    );
}

#[test]
fn a_5xx_with_an_html_body_is_a_retryable_server_error_showing_the_start_of_the_body() {
    let err = parse_response(
        &Provider::openai("m"),
        502,
        &[],
        "<html>\n<body>502 Bad Gateway</body>\n</html>",
    )
    .unwrap_err();
    assert_eq!(
        err,
        ProviderError::Server {
            status: 502,
            kind: None,
            message: "<html> <body>502 Bad Gateway</body> </html>".into(),
            retry_after: None,
        }
    );
    assert!(err.is_retryable());
}

#[test]
fn a_cut_off_2xx_body_is_malformed_and_retryable_and_a_json_body_of_the_wrong_shape_is_not() {
    let err =
        parse_response(&Provider::openai("m"), 200, &[], r#"{"choices": [{"mess"#).unwrap_err();
    assert!(matches!(err, ProviderError::Malformed { status: 200, .. }));
    assert!(err.is_retryable());
    assert!(err.to_string().contains("ends early"));
    let err = parse_response(&Provider::openai("m"), 200, &[], "").unwrap_err();
    assert!(matches!(err, ProviderError::Malformed { .. }));
    let err = parse_response(&Provider::openai("m"), 200, &[], r#"{"choices": []}"#).unwrap_err();
    assert_eq!(
        err,
        ProviderError::UnexpectedShape {
            status: 200,
            detail: "no `choices[0]`".into()
        }
    );
    assert!(!err.is_retryable());
}

#[test]
fn an_error_object_inside_a_200_is_classified_by_its_code() {
    let body =
        r#"{"error": {"code": 429, "message": "Rate limit exceeded: free-models-per-min."}}"#;
    let err = parse_response(&Provider::openai("m"), 200, &[], body).unwrap_err();
    assert!(matches!(
        err,
        ProviderError::RateLimited { status: 429, .. }
    ));
}

#[test]
fn vllm_and_fastapi_error_bodies_show_their_message() {
    let vllm = r#"{"object": "error", "message": "The model `x` does not exist.", "type": "NotFoundError", "param": null, "code": 404}"#;
    let err = parse_response(&Provider::openai("m"), 404, &[], vllm).unwrap_err();
    assert_eq!(
        err.to_string(),
        "request refused by the provider (HTTP 404, NotFoundError): The model `x` does not exist."
    );
    let fastapi = r#"{"detail": "Not Found"}"#;
    let err = parse_response(&Provider::openai("m"), 404, &[], fastapi).unwrap_err();
    assert_eq!(
        err.to_string(),
        "request refused by the provider (HTTP 404): Not Found"
    );
}

#[test]
fn a_408_and_an_app_timeout_are_retryable_timeouts_and_a_network_error_is_retryable() {
    let err = parse_response(&Provider::openai("m"), 408, &[], "").unwrap_err();
    assert_eq!(err, ProviderError::Timeout { status: Some(408) });
    assert!(err.is_retryable());
    assert!(ProviderError::Timeout { status: None }.is_retryable());
    assert!(ProviderError::Network {
        message: "Failed to fetch".into()
    }
    .is_retryable());
}
