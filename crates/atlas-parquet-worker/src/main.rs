//! The Web Worker that reads Parquet files for the Import view (see the library's docs).
//!
//! Trunk builds this binary for wasm32 (`data-type="worker"`, `no-modules` bindings, loader shim
//! `atlas-parquet-worker_loader.js`; see `index.html`). On start it posts `{"reply":"ready"}`; each
//! message is `{job: "<ParquetJob JSON>", files: [File, …]}` and is answered by one
//! `"<ParquetReply JSON>"` string. Natively the binary only says what it is.

#[cfg(target_arch = "wasm32")]
fn main() {
    web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "atlas-parquet-worker is the app's Parquet Web Worker: Trunk builds it for wasm32 \
         (see index.html). Natively, use `atlas import` on the Parquet file."
    );
    std::process::exit(2);
}

#[cfg(target_arch = "wasm32")]
mod web {
    use atlas_parquet_worker::{run, ParquetJob, ParquetReply};
    use js_sys::{Array, Reflect, Uint8Array};
    use wasm_bindgen::prelude::*;
    use wasm_bindgen_futures::{spawn_local, JsFuture};
    use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

    fn post(scope: &DedicatedWorkerGlobalScope, reply: &ParquetReply) {
        // Posting a string cannot fail (it is always cloneable).
        let _ = scope.post_message(&JsValue::from_str(&reply.to_json()));
    }

    /// The job and the files of one message, each file read whole (`Blob.arrayBuffer()`).
    async fn read(data: JsValue) -> Result<(ParquetJob, Vec<(String, Vec<u8>)>), String> {
        let text = Reflect::get(&data, &JsValue::from_str("job"))
            .ok()
            .and_then(|v| v.as_string())
            .ok_or("the message has no job")?;
        let job: ParquetJob =
            serde_json::from_str(&text).map_err(|e| format!("the job is malformed: {e}"))?;
        let files: Array = Reflect::get(&data, &JsValue::from_str("files"))
            .ok()
            .and_then(|v| v.dyn_into::<Array>().ok())
            .ok_or("the message has no files")?;
        let mut out = Vec::with_capacity(files.length() as usize);
        for value in files.iter() {
            let file: File = value
                .dyn_into()
                .map_err(|_| "the message's files are not File objects".to_string())?;
            let buffer = JsFuture::from(file.array_buffer())
                .await
                .map_err(|e| format!("reading {} failed: {e:?}", file.name()))?;
            out.push((file.name(), Uint8Array::new(&buffer).to_vec()));
        }
        Ok((job, out))
    }

    pub fn start() {
        console_error_panic_hook::set_once();
        let scope: DedicatedWorkerGlobalScope = js_sys::global().unchecked_into();
        let for_messages = scope.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
            let scope = for_messages.clone();
            spawn_local(async move {
                let reply = match read(event.data()).await {
                    Ok((job, files)) => run(&job, files),
                    Err(message) => ParquetReply::Failed { message },
                };
                post(&scope, &reply);
            });
        });
        scope.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget();
        let _ = scope.post_message(&JsValue::from_str(r#"{"reply":"ready"}"#));
    }
}
