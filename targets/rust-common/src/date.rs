//! The `Date` header in IMF-fixdate form, formatted at most once per second
//! per thread (a thread-local cache needs no lock on the request path).

use std::cell::RefCell;
use std::time::{SystemTime, UNIX_EPOCH};

/// Length of an IMF-fixdate: `Sun, 22 Nov 2026 06:33:00 GMT`.
pub const IMF_FIXDATE_LEN: usize = 29;

struct Cached {
    unix_secs: u64,
    text: [u8; IMF_FIXDATE_LEN],
}

thread_local! {
    static CACHE: RefCell<Cached> = const {
        RefCell::new(Cached { unix_secs: u64::MAX, text: [b' '; IMF_FIXDATE_LEN] })
    };
}

/// The current time as an IMF-fixdate, refreshed when the second changes.
pub fn http_date() -> [u8; IMF_FIXDATE_LEN] {
    let now = SystemTime::now();
    let unix_secs = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.unix_secs != unix_secs {
            cache.text = format_imf_fixdate(now);
            cache.unix_secs = unix_secs;
        }
        cache.text
    })
}

/// The current `Date` header value as a `&str`-able byte array.
pub fn http_date_string() -> String {
    String::from_utf8_lossy(&http_date()).into_owned()
}

fn format_imf_fixdate(time: SystemTime) -> [u8; IMF_FIXDATE_LEN] {
    let text = httpdate::fmt_http_date(time);
    let mut out = [b' '; IMF_FIXDATE_LEN];
    // httpdate always yields 29 ASCII bytes for dates after 1970.
    let len = text.len().min(IMF_FIXDATE_LEN);
    out[..len].copy_from_slice(&text.as_bytes()[..len]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_a_known_instant() {
        let instant = UNIX_EPOCH + Duration::from_secs(1_795_329_180);
        assert_eq!(
            &format_imf_fixdate(instant),
            b"Sun, 22 Nov 2026 06:33:00 GMT"
        );
    }

    #[test]
    fn current_date_parses_back_within_a_few_seconds() {
        let text = http_date_string();
        assert_eq!(text.len(), IMF_FIXDATE_LEN);
        assert!(text.ends_with(" GMT"));
        let parsed = httpdate::parse_http_date(&text).expect("IMF-fixdate parses");
        let skew = SystemTime::now()
            .duration_since(parsed)
            .unwrap_or_else(|e| e.duration());
        assert!(skew < Duration::from_secs(5), "skew {skew:?}");
    }
}
