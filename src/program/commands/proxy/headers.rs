//! `--header 'NAME: VALUE'`: the headers sent with every request to a remote server, a value's
//! `${NAME}` taken from the environment so that no secret has to sit in a client's config file.

use anyhow::{bail, Context};
use hyper::header::{HeaderName, HeaderValue};

/// Parses each `NAME: VALUE`, with the environment's variables put in for `${VARIABLE}`.
pub fn parse(
    headers: &[String],
    variable: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<Vec<(HeaderName, HeaderValue)>> {
    headers
        .iter()
        .map(|header| {
            let (name, value) = header
                .split_once(':')
                .with_context(|| format!("--header {header:?}: expected 'NAME: VALUE'"))?;
            let name = HeaderName::from_bytes(name.trim().as_bytes())
                .with_context(|| format!("--header {header:?}: {name:?} is not a header name"))?;
            let value =
                expand(value.trim(), &variable).with_context(|| format!("--header {name}"))?;
            let mut value = HeaderValue::from_str(&value).with_context(|| {
                format!("--header {name}: its value holds a character a header cannot carry")
            })?;
            // Never shown in a debugging dump of the request.
            value.set_sensitive(true);
            Ok((name, value))
        })
        .collect()
}

/// `text` with each `${NAME}` replaced by the variable's value; an unset variable is an error
/// naming it, never an empty credential sent in silence.
fn expand(text: &str, variable: impl Fn(&str) -> Option<String>) -> anyhow::Result<String> {
    let mut expanded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        expanded.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            bail!("an unclosed ${{ in its value");
        };
        let name = &after[..end];
        if name.is_empty() {
            bail!("an empty ${{}} in its value");
        }
        match variable(name) {
            Some(value) => expanded.push_str(&value),
            None => bail!("${{{name}}} is not set in the environment"),
        }
        rest = &after[end + 1..];
    }
    expanded.push_str(rest);
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "s3cret".to_owned())
    }

    #[test]
    fn a_variable_in_a_value_is_taken_from_the_environment() {
        let parsed = parse(
            &[
                "Authorization: Bearer ${TOKEN}".to_owned(),
                "X-Plain:v".to_owned(),
            ],
            env,
        )
        .expect("valid");
        assert_eq!(parsed[0].0, "authorization");
        assert_eq!(parsed[0].1, "Bearer s3cret");
        assert!(parsed[0].1.is_sensitive());
        assert_eq!(parsed[1].1, "v");
    }

    #[test]
    fn an_unset_variable_is_an_error_naming_it() {
        let error =
            parse(&["Authorization: Bearer ${GITHUB_TOKEN}".to_owned()], env).expect_err("unset");
        let text = format!("{error:#}");
        assert!(text.contains("${GITHUB_TOKEN} is not set"), "{text}");
        assert!(text.contains("--header authorization"), "{text}");
    }

    #[test]
    fn a_header_without_a_colon_or_with_a_bad_name_is_refused() {
        assert!(parse(&["Authorization Bearer x".to_owned()], env).is_err());
        assert!(parse(&["Bad Name: x".to_owned()], env).is_err());
        assert!(parse(&["X: ${UNCLOSED".to_owned()], env).is_err());
    }
}
