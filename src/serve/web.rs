//! The web board at `/`: one HTML page, its script and its style sheet, compiled
//! into the binary (no CDN, nothing fetched from elsewhere). The page draws a
//! table's position and asks `/api/probe` for the values; see `web/app.js`.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const INDEX: &str = include_str!("web/index.html");
const SCRIPT: &str = include_str!("web/app.js");
const STYLE: &str = include_str!("web/style.css");

/// Only this server's own script and style may run on the page: a table name or
/// a position shown on it can never become code.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; \
    frame-ancestors 'none'";

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// `GET /`: the page.
pub async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

/// `GET /app.js`: the page's script.
pub async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

/// `GET /style.css`: the page's style sheet.
pub async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}
