//! The last lines of a log file, for error messages.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;

/// At most this many bytes are read from the end of a log.
const MAX_TAIL_BYTES: u64 = 64 * 1024;
/// A line longer than this is shown by its end, after `…`.
const MAX_LINE_CHARS: usize = 1000;

/// The last `lines` lines of the file at `path` (empty when it is missing).
#[must_use]
pub fn last_lines(path: &Path, lines: usize) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(MAX_TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(start)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let all: Vec<&str> = text.trim_end().lines().collect();
    // A partial first line (cut by the byte limit) is dropped, unless it is
    // all there is: a log of lines longer than the limit still shows its end.
    let cut_first = start > 0 && all.len() > 1;
    let from = all
        .len()
        .saturating_sub(lines)
        .max(usize::from(cut_first))
        .min(all.len());
    let shown: Vec<String> = all[from..].iter().map(|line| line_end(line)).collect();
    if start > 0 && !cut_first && !shown.is_empty() && !shown[0].starts_with('…') {
        return format!("…{}", shown.join("\n"));
    }
    shown.join("\n")
}

/// `line`, or its last [`MAX_LINE_CHARS`] characters after `…`.
fn line_end(line: &str) -> String {
    let count = line.chars().count();
    if count <= MAX_LINE_CHARS {
        return line.to_owned();
    }
    let end: String = line.chars().skip(count - MAX_LINE_CHARS).collect();
    format!("…{end}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, "a\nb\nc\nd\n").unwrap();
        assert_eq!(last_lines(&path, 2), "c\nd");
        assert_eq!(last_lines(&path, 10), "a\nb\nc\nd");
        assert_eq!(last_lines(&dir.path().join("missing"), 3), "");
    }

    #[test]
    fn reads_only_the_end_of_a_big_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let text: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, text).unwrap();
        assert_eq!(last_lines(&path, 2), "line 99998\nline 99999");
    }

    /// Issue "hostile input, third round", message 3: "(it wrote nothing)"
    /// after a server wrote 6.5 MB of stderr in lines longer than the tail.
    #[test]
    fn a_log_of_long_lines_shows_the_end_of_the_last() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let line = format!("{}the end\n", "x".repeat(200_000));
        std::fs::write(&path, line.repeat(3)).unwrap();
        let tail = last_lines(&path, 5);
        assert!(tail.starts_with('…'), "{tail:.40}");
        assert!(tail.ends_with("the end"), "{tail:.40}");
        assert!(tail.chars().count() <= MAX_LINE_CHARS + 1);
    }
}
