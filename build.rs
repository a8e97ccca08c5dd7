//! With the `split` feature on wasm32, the linker keeps the relocations (`--emit-relocs`) that
//! `wasm-split` needs to cut the app into on-demand modules (scripts/split-app.sh, src/on_demand.rs).

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let split = std::env::var_os("CARGO_FEATURE_SPLIT").is_some();
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|arch| arch == "wasm32");
    if split && wasm {
        println!("cargo::rustc-link-arg-bins=--emit-relocs");
    }
}
