//! Where the gateway forwards each provider's requests: `--upstream [API=]URL`, read once at
//! the start.

use anyhow::{bail, Context};
use hyper::Uri;
use reasons::apis::ModelProvider;

/// The API an `--upstream API=URL` names, and its URL; `None` for a bare URL (which may hold
/// an `=` in its query): the one rule `gateway` and `run` tell them apart by.
pub fn named_upstream(value: &str) -> Option<(&str, &str)> {
    value
        .split_once('=')
        .filter(|(name, _)| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

/// Where each provider's requests go.
#[derive(Debug, Clone)]
pub(super) struct Upstreams {
    by_provider: Vec<(ModelProvider, Upstream)>,
    /// Whose upstream a request of no API's goes to.
    unclaimed: ModelProvider,
}

impl Upstreams {
    /// Reads `--upstream [API=]URL`…: each provider's own API unless a bare URL sends every API
    /// to one place; `API=URL` then sets one provider's, whatever the order.
    pub(super) fn parse(given: &[String]) -> anyhow::Result<Upstreams> {
        let providers = ModelProvider::all();
        let names = || {
            let names: Vec<&str> = providers.iter().map(|provider| provider.name).collect();
            names.join(", ")
        };
        let mut everything: Option<&str> = None;
        let mut one: Vec<(ModelProvider, &str)> = Vec::new();
        for value in given {
            match named_upstream(value) {
                Some((name, url)) => {
                    let Some(provider) = providers.iter().find(|provider| provider.name == name)
                    else {
                        bail!(
                            "--upstream {value}: no API is named {name} (give {})",
                            names()
                        );
                    };
                    one.retain(|(earlier, _)| earlier != provider);
                    one.push((*provider, url));
                }
                None if everything.is_some() => {
                    bail!(
                        "--upstream {value}: give one URL for every API, or API=URL ({})",
                        names()
                    )
                }
                None => everything = Some(value),
            }
        }
        let by_provider = providers
            .iter()
            .map(|provider| {
                let url = one
                    .iter()
                    .find(|(named, _)| named == provider)
                    .map(|(_, url)| *url)
                    .or(everything)
                    .unwrap_or(provider.default_upstream);
                Ok((*provider, Upstream::parse(url)?))
            })
            .collect::<anyhow::Result<_>>()?;
        // A request nothing ties to an API (an agent asking its endpoint for a model list at a
        // path of its own) goes where the person pointed the one API they named, as it would
        // without the gateway; else to the first provider's.
        let unclaimed = match one.as_slice() {
            [(provider, _)] if everything.is_none() => *provider,
            _ => providers[0],
        };
        Ok(Upstreams {
            by_provider,
            unclaimed,
        })
    }

    /// The provider a request of no API's goes to.
    pub(super) fn for_unclaimed_paths(&self) -> ModelProvider {
        self.unclaimed
    }

    pub(super) fn of(&self, provider: ModelProvider) -> &Upstream {
        self.by_provider
            .iter()
            .find(|(named, _)| *named == provider)
            .map_or(&self.by_provider[0].1, |(_, upstream)| upstream)
    }

    /// Where each goes, for the startup line: one URL when they all go to the same.
    pub(super) fn describe(&self) -> String {
        let first = &self.by_provider[0].1.url;
        if self
            .by_provider
            .iter()
            .all(|(_, upstream)| &upstream.url == first)
        {
            return format!("forwarding to {first}");
        }
        let each: Vec<String> = self
            .by_provider
            .iter()
            .map(|(provider, upstream)| format!("{} to {}", provider.name, upstream.url))
            .collect();
        format!("forwarding {}", each.join(", "))
    }
}

/// The upstream's origin and path prefix.
#[derive(Debug, Clone)]
pub(super) struct Upstream {
    /// As given.
    url: String,
    scheme: String,
    pub(super) authority: String,
    prefix: String,
}

impl Upstream {
    fn parse(url: &str) -> anyhow::Result<Upstream> {
        let uri: Uri = url
            .parse()
            .with_context(|| format!("--upstream {url}: not a URL"))?;
        let scheme = match uri.scheme_str() {
            Some(scheme @ ("http" | "https")) => scheme.to_owned(),
            _ => bail!("--upstream {url}: give an http:// or https:// URL"),
        };
        let Some(authority) = uri.authority() else {
            bail!("--upstream {url}: no host");
        };
        if uri.query().is_some() {
            bail!("--upstream {url}: a query has no place in the upstream");
        }
        Ok(Upstream {
            url: url.to_owned(),
            scheme,
            authority: authority.to_string(),
            prefix: uri.path().trim_end_matches('/').to_owned(),
        })
    }

    /// The upstream URL for a request's path and query.
    pub(super) fn uri_for(&self, path_and_query: &str) -> Result<Uri, hyper::http::Error> {
        Uri::builder()
            .scheme(self.scheme.as_str())
            .authority(self.authority.as_str())
            .path_and_query(format!("{}{path_and_query}", self.prefix))
            .build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unclaimed(given: &[&str]) -> &'static str {
        let given: Vec<String> = given.iter().map(|value| (*value).to_owned()).collect();
        Upstreams::parse(&given).unwrap().for_unclaimed_paths().name
    }

    #[test]
    fn a_request_of_no_api_s_goes_to_the_one_upstream_named() {
        assert_eq!(unclaimed(&["openai=http://127.0.0.1:8080"]), "openai");
        let first = ModelProvider::all()[0].name;
        assert_eq!(unclaimed(&[]), first);
        assert_eq!(unclaimed(&["http://127.0.0.1:8080"]), first);
        assert_eq!(
            unclaimed(&[
                "openai=http://127.0.0.1:8080",
                "gemini=http://127.0.0.1:8081"
            ]),
            first
        );
        assert_eq!(
            unclaimed(&["http://127.0.0.1:9", "openai=http://127.0.0.1:8080"]),
            first
        );
    }
}
