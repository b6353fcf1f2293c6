//! What a run of a spec at one binding will allocate, known before allocating anything.
//!
//! `symstride run` builds random inputs, executes the kernel into a fresh output and checks
//! it against a naive reference. At a large binding (`c = 2^31`) that is tens of gigabytes:
//! the process used to be killed by the kernel's OOM killer after a minute instead of
//! refusing. The estimate below is exact for the allocations `run` makes (input storages
//! of their strided extent, the dense output, the reference's contiguous copies), so the
//! CLI can compare it with a limit first.

use super::spec::Spec;
use crate::error::{Error, Result};

/// Bytes of each f32 element.
const F32: u64 = 4;

/// The allocations of one run, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// Input storages (each the strided extent of its layout).
    pub inputs: u64,
    /// The output (dense, one element per point of the broadcast shape).
    pub output: u64,
    /// The naive reference check: a contiguous copy of every input and of the output.
    pub reference: u64,
}

impl MemoryEstimate {
    /// Total bytes, with or without the reference check.
    pub fn total(&self, with_reference: bool) -> u64 {
        let r = if with_reference { self.reference } else { 0 };
        self.inputs.saturating_add(self.output).saturating_add(r)
    }
}

/// Estimates the allocations of running `spec` at `values` (spec symbol order). Fails when
/// the inputs are not valid layouts there or the shapes do not broadcast.
pub fn estimate_run_memory(spec: &Spec, values: &[i64]) -> Result<MemoryEstimate> {
    let inputs = spec.concrete_inputs(values)?;
    let shapes: Vec<&[i64]> = inputs.iter().map(|(s, _)| &s[..]).collect();
    let out_shape = crate::layout::infer_size(&shapes)?;
    let numel = |sizes: &[i64]| -> u64 {
        sizes
            .iter()
            .fold(1u64, |n, &s| n.saturating_mul(s.max(0) as u64))
    };
    let mut input_bytes = 0u64;
    let mut copies = 0u64;
    for (sizes, strides) in &inputs {
        input_bytes = input_bytes.saturating_add(F32.saturating_mul(extent(sizes, strides)?));
        copies = copies.saturating_add(F32.saturating_mul(numel(sizes)));
    }
    let output = F32.saturating_mul(numel(&out_shape));
    Ok(MemoryEstimate {
        inputs: input_bytes,
        output,
        reference: copies.saturating_add(output),
    })
}

/// Elements a layout spans (0 when empty): `1 + sum((size - 1) * stride)`.
fn extent(sizes: &[i64], strides: &[i64]) -> Result<u64> {
    if sizes.contains(&0) {
        return Ok(0);
    }
    let mut last: u64 = 0;
    for (&n, &s) in sizes.iter().zip(strides) {
        if n < 0 || s < 0 {
            return Err(Error::invalid(format!(
                "negative size or stride in {sizes:?} / {strides:?}"
            )));
        }
        last = last.saturating_add((n as u64 - 1).saturating_mul(s as u64));
    }
    Ok(last.saturating_add(1))
}

/// Parses a byte count: an integer with an optional unit `K`, `M`, `G`, `T` (powers of
/// 1024; `KiB`, `MB`, ... accepted the same way) — `512M`, `8G`, `1073741824`.
pub fn parse_bytes(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        u => {
            return Err(Error::parse(
                "byte count",
                format!("unknown unit `{u}` in `{text}` (use K, M, G or T)"),
            ))
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| Error::parse("byte count", format!("`{text}` is not a number of bytes")))?;
    let bytes = v * scale as f64;
    if !bytes.is_finite() || bytes < 0.0 || bytes >= u64::MAX as f64 {
        return Err(Error::parse(
            "byte count",
            format!("`{text}` is out of range"),
        ));
    }
    Ok(bytes as u64)
}

/// Human-readable bytes (`1.50 GiB`).
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aot::SEED_SPEC_JSON;

    #[test]
    fn estimate_counts_inputs_output_and_reference() {
        let spec = Spec::from_json(SEED_SPEC_JSON).unwrap();
        // [2, c, h, w] channels-last + [c, h, w] contiguous at c=3, h=4, w=5.
        let e = estimate_run_memory(&spec, &[3, 4, 5]).unwrap();
        assert_eq!(e.inputs, 4 * (120 + 60));
        assert_eq!(e.output, 4 * 120);
        assert_eq!(e.reference, 4 * (120 + 60 + 120));
        assert_eq!(e.total(false), 4 * 300);
        // The binding: far beyond any machine, computed without allocating.
        let big = estimate_run_memory(&spec, &[1 << 31, 1, 1]).unwrap();
        assert!(big.total(true) > 64 << 30);
    }

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("1024").unwrap(), 1024);
        assert_eq!(parse_bytes("512M").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("8G").unwrap(), 8 << 30);
        assert_eq!(parse_bytes("1.5KiB").unwrap(), 1536);
        assert!(parse_bytes("12Q").is_err());
        assert!(parse_bytes("lots").is_err());
        assert_eq!(fmt_bytes(3 << 30), "3.00 GiB");
    }
}
