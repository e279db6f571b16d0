//! Byte sizes as people write them: parsed from `512MiB`/`8GiB`, printed as `1.5 GiB`.

use anyhow::{Context, Result, bail};

/// Bytes as B/KiB/MiB/GiB/TiB with one decimal.
pub fn human_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Seconds as people read them: `42 s`, `7.5 min`, `3.2 h`, `12.4 days`.
pub fn human_seconds(seconds: f64) -> String {
    if seconds < 60.0 {
        format!("{seconds:.0} s")
    } else if seconds < 3600.0 {
        format!("{:.1} min", seconds / 60.0)
    } else if seconds < 48.0 * 3600.0 {
        format!("{:.1} h", seconds / 3600.0)
    } else {
        format!("{:.1} days", seconds / 86400.0)
    }
}

/// A number followed by a unit (`1.5GiB`, `30s`): the number and the unit's text;
/// `examples` shows what is expected in the error.
fn number_and_unit<'a>(text: &'a str, what: &str, examples: &str) -> Result<(f64, &'a str)> {
    let t = text.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num
        .parse()
        .with_context(|| format!("bad {what} `{text}` (e.g. {examples})"))?;
    Ok((num, unit.trim()))
}

/// Parses a size such as `512MiB`, `8GiB`, `2G` or a plain byte count.
pub fn parse_size(text: &str) -> Result<u64> {
    let (num, unit) = number_and_unit(text, "size", "512MiB, 8GiB")?;
    let mult: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => bail!("bad size unit in `{text}` (use KiB, MiB, GiB)"),
    };
    let bytes = num * mult as f64;
    if !bytes.is_finite() || bytes >= u64::MAX as f64 {
        bail!("size `{text}` is too large");
    }
    Ok(bytes as u64)
}

/// Parses a memory budget given by `flag` (`--memory`, `--tt`): a size that this
/// machine's physical memory can hold, so that a typo fails at once instead of
/// swapping or aborting hours later.
pub fn parse_memory(flag: &str, text: &str) -> Result<u64> {
    let bytes = parse_size(text).with_context(|| format!("bad {flag}"))?;
    if let Some(total) = crate::sys::total_memory_bytes()
        && bytes > total
    {
        bail!(
            "{flag} {text} is more than this machine's memory ({})",
            human_bytes(total)
        );
    }
    Ok(bytes)
}

/// Parses a duration such as `30s`, `5m`, `2h`, `1.5h` or plain seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration> {
    let (num, unit) = number_and_unit(text, "duration", "30s, 5m, 2h")?;
    let seconds = match unit {
        "" | "s" => num,
        "m" | "min" => num * 60.0,
        "h" => num * 3600.0,
        _ => bail!("bad duration unit in `{text}` (use s, m or h)"),
    };
    std::time::Duration::try_from_secs_f64(seconds)
        .with_context(|| format!("duration `{text}` is out of range"))
}

/// `n` and its noun, singular for 1: `1 symmetry`, `8 symmetries`.
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
