//! Routing: method + path + query to one endpoint with validated parameters.

use crate::ContractError;
use crate::params::{FILE_KB, MIXED_ITERS, WAIT_MS};

/// The request methods the contract distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    /// `HEAD` is routed like `GET`; the target sends the head without a body.
    Head,
    Post,
    Other,
}

impl Method {
    pub fn parse(raw: &str) -> Self {
        match raw {
            "GET" => Self::Get,
            "HEAD" => Self::Head,
            "POST" => Self::Post,
            _ => Self::Other,
        }
    }
}

/// One endpoint of the contract, its parameters already validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Healthz,
    Plaintext,
    Json,
    Io { wait_ms: u32 },
    Db,
    File { kb: u32 },
    Upload,
    Mixed { iters: u32, wait_ms: u32 },
    Stats,
}

/// Routes a request. `target` is the request target (`/io?ms=5`).
///
/// The method is checked before the parameters, so `POST /io?ms=x` is 405.
pub fn route(method_raw: &str, target: &str) -> Result<Route, ContractError> {
    let (path, query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let method = Method::parse(method_raw);
    let wants_post = path == "/upload";
    if !known_path(path) {
        return Err(ContractError::NotFound {
            path: path.to_owned(),
        });
    }
    let method_fits = if wants_post {
        method == Method::Post
    } else {
        matches!(method, Method::Get | Method::Head)
    };
    if !method_fits {
        return Err(ContractError::MethodNotAllowed {
            method: method_raw.to_owned(),
            path: path.to_owned(),
        });
    }
    with_parameters(path, query)
}

fn known_path(path: &str) -> bool {
    matches!(
        path,
        "/healthz"
            | "/plaintext"
            | "/json"
            | "/io"
            | "/db"
            | "/file"
            | "/upload"
            | "/mixed"
            | "/stats"
    )
}

fn with_parameters(path: &str, query: Option<&str>) -> Result<Route, ContractError> {
    Ok(match path {
        "/healthz" => Route::Healthz,
        "/plaintext" => Route::Plaintext,
        "/json" => Route::Json,
        "/io" => Route::Io {
            wait_ms: WAIT_MS.read(query)?,
        },
        "/db" => Route::Db,
        "/file" => Route::File {
            kb: FILE_KB.read(query)?,
        },
        "/upload" => Route::Upload,
        "/mixed" => Route::Mixed {
            iters: MIXED_ITERS.read(query)?,
            wait_ms: WAIT_MS.read(query)?,
        },
        _ => Route::Stats,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_every_endpoint() {
        assert_eq!(route("GET", "/healthz"), Ok(Route::Healthz));
        assert_eq!(route("GET", "/plaintext"), Ok(Route::Plaintext));
        assert_eq!(route("GET", "/json"), Ok(Route::Json));
        assert_eq!(route("GET", "/io"), Ok(Route::Io { wait_ms: 10 }));
        assert_eq!(route("GET", "/io?ms=200"), Ok(Route::Io { wait_ms: 200 }));
        assert_eq!(route("GET", "/db"), Ok(Route::Db));
        assert_eq!(route("GET", "/file?kb=3"), Ok(Route::File { kb: 3 }));
        assert_eq!(route("POST", "/upload"), Ok(Route::Upload));
        assert_eq!(
            route("GET", "/mixed?iters=5&ms=0"),
            Ok(Route::Mixed {
                iters: 5,
                wait_ms: 0
            })
        );
        assert_eq!(route("GET", "/stats"), Ok(Route::Stats));
        assert_eq!(route("HEAD", "/plaintext"), Ok(Route::Plaintext));
    }

    #[test]
    fn unknown_path_is_404_whatever_the_method() {
        assert_eq!(route("GET", "/nope").unwrap_err().status(), 404);
        assert_eq!(route("POST", "/plaintext/").unwrap_err().status(), 404);
        assert_eq!(route("GET", "").unwrap_err().status(), 404);
    }

    #[test]
    fn wrong_method_is_405_before_parameters() {
        assert_eq!(route("POST", "/plaintext").unwrap_err().status(), 405);
        assert_eq!(route("GET", "/upload").unwrap_err().status(), 405);
        assert_eq!(route("DELETE", "/io?ms=abc").unwrap_err().status(), 405);
        assert_eq!(
            route("PUT", "/json").unwrap_err().to_string(),
            "method PUT is not allowed on /json"
        );
    }

    #[test]
    fn bad_parameter_is_400() {
        let error = route("GET", "/mixed?iters=1&ms=x").unwrap_err();
        assert_eq!(error.status(), 400);
        assert_eq!(error.to_string(), "ms must be an integer in 0..=10000");
    }
}
