//! The one HTTP client the program makes requests with: the gateway to its upstreams, the spans
//! to a collector, a hook to a team's gateway. hyper over rustls with the webpki roots, so TLS is
//! verified the same way on every machine; plain `http://` too (loopback, a team's network).

use std::time::Duration;

use hyper::body::Body;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// A client sending request bodies of type `B`.
pub type HttpsClient<B> = Client<HttpsConnector<HttpConnector>, B>;

/// A client whose connections are given `connect_timeout` to open.
pub fn client<B>(connect_timeout: Duration) -> HttpsClient<B>
where
    B: Body + Send,
    B::Data: Send,
{
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    // Requests and answers are small and each is waited for: Nagle's delay would only add to it.
    http.set_nodelay(true);
    http.set_connect_timeout(Some(connect_timeout));
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Client::builder(TokioExecutor::new()).build(https)
}
