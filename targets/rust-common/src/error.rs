//! Contract errors: each maps to one status and one JSON body.

use serde::Serialize;

/// A request the contract answers with a 4xx or 5xx.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContractError {
    /// 404: no endpoint has this path.
    NotFound { path: String },
    /// 405: the path exists but not for this method.
    MethodNotAllowed { method: String, path: String },
    /// 400: a query parameter is not an integer or out of its range.
    BadParameter { message: String },
    /// 400: the request could not be parsed as HTTP/1.1.
    Malformed { message: String },
    /// 411: a body without `Content-Length` (chunked uploads are not read).
    LengthRequired,
    /// 413: the declared body is larger than the upload limit.
    PayloadTooLarge { declared_bytes: u64 },
    /// 431: the request head does not fit the head buffer.
    HeadTooLarge { limit_bytes: usize },
    /// 503: `/db` without a reachable database.
    DatabaseUnavailable { reason: String },
    /// 500: a local resource (payload file, upload directory) failed.
    Internal { message: String },
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl ContractError {
    /// The HTTP status code the contract gives this error.
    pub fn status(&self) -> u16 {
        match self {
            Self::NotFound { .. } => 404,
            Self::MethodNotAllowed { .. } => 405,
            Self::BadParameter { .. } | Self::Malformed { .. } => 400,
            Self::LengthRequired => 411,
            Self::PayloadTooLarge { .. } => 413,
            Self::HeadTooLarge { .. } => 431,
            Self::DatabaseUnavailable { .. } => 503,
            Self::Internal { .. } => 500,
        }
    }

    /// The JSON body: `{"error":"<message>"}`.
    pub fn body(&self) -> Vec<u8> {
        let message = self.to_string();
        serde_json::to_vec(&ErrorBody { error: &message }).expect("a string always serialises")
    }
}

impl std::fmt::Display for ContractError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound { path } => write!(f, "no endpoint at {path}"),
            Self::MethodNotAllowed { method, path } => {
                write!(f, "method {method} is not allowed on {path}")
            }
            Self::BadParameter { message } => f.write_str(message),
            Self::Malformed { message } => write!(f, "malformed request: {message}"),
            Self::LengthRequired => f.write_str(
                "a request body needs a Content-Length header (chunked bodies are not accepted)",
            ),
            Self::PayloadTooLarge { declared_bytes } => write!(
                f,
                "body of {declared_bytes} bytes exceeds the upload limit of {} bytes",
                crate::upload::MAX_UPLOAD_BYTES
            ),
            Self::HeadTooLarge { limit_bytes } => {
                write!(f, "request head exceeds {limit_bytes} bytes")
            }
            Self::DatabaseUnavailable { reason } => write!(f, "database unavailable: {reason}"),
            Self::Internal { message } => f.write_str(message),
        }
    }
}

impl std::error::Error for ContractError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_json_with_the_message() {
        let error = ContractError::BadParameter {
            message: "ms must be an integer in 0..=10000".into(),
        };
        assert_eq!(error.status(), 400);
        assert_eq!(
            error.body(),
            br#"{"error":"ms must be an integer in 0..=10000"}"#.to_vec()
        );
    }

    #[test]
    fn quotes_in_messages_are_escaped() {
        let error = ContractError::NotFound {
            path: "/a\"b".into(),
        };
        assert_eq!(
            error.body(),
            br#"{"error":"no endpoint at /a\"b"}"#.to_vec()
        );
    }
}
