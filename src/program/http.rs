//! The one HTTP client the program makes requests with: the gateway to its upstreams, the spans
//! to a collector, a hook to a team's gateway, the proxy to a remote MCP server. hyper over rustls
//! with the webpki roots, so TLS is verified the same way on every machine; plain `http://` too
//! (loopback, a team's network). And the one way it serves HTTP (the gateway, `proxy --listen`):
//! hyper, HTTP/1.1 and h2c.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

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

/// Listens on `listen` (`HOST:PORT`, a name looked up), the first address it names.
pub async fn bind(listen: &str) -> anyhow::Result<TcpListener> {
    let address: SocketAddr = tokio::net::lookup_host(listen)
        .await
        .ok()
        .and_then(|mut addresses| addresses.next())
        .with_context(|| format!("--listen {listen}: not an address to listen on"))?;
    TcpListener::bind(address)
        .await
        .with_context(|| format!("cannot listen on {address}"))
}

/// Serves each connection `listener` accepts, each request answered by `handle`, until
/// `shutdown` completes. A connection that cannot be accepted (out of file descriptors, say) is
/// told to `refused` and the others are served on.
pub async fn serve_until<H, F, B>(
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
    handle: H,
    refused: impl Fn(&std::io::Error),
) where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(error) => {
                    refused(&error);
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let handle = handle.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let answer = handle(request);
                async move { Ok::<_, Infallible>(answer.await) }
            });
            // A client that goes away mid-answer is no error of the server's.
            let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Completes on Ctrl-C, or on SIGTERM where there are signals.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Headers that belong to one connection, not to the request or answer they travel with.
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// Removes the hop-by-hop headers, those named in `Connection` too.
pub fn remove_hop_by_hop(headers: &mut hyper::HeaderMap) {
    let named: Vec<hyper::header::HeaderName> = headers
        .get_all(hyper::header::CONNECTION)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| hyper::header::HeaderName::from_bytes(name.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(name);
    }
}

/// An error and its causes as one line, which is where a connection error says what happened;
/// a cause whose words the line already holds is not said again.
pub fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}
