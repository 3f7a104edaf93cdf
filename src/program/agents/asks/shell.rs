//! Shell command lines as the agents' permission checks read them: the simple commands a line is
//! made of, each as its words.
//!
//! Only as much of the shell as telling "every command here only reads" needs: quotes, escapes and
//! the operators that join commands. What it cannot read (a substitution, a here-document) is left
//! in the words as it is; the callers treat a command they do not know as one the agent asks for,
//! and a known one as read-only only by its program, so a misread line errs towards no ask.

/// The words of a command line, unquoted as a POSIX shell would (single and double quotes,
/// backslashes), with no operators split off.
pub fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                words.extend(word.take());
            }
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                word.extend(chars.by_ref().take_while(|&c| c != '\''));
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).extend(chars.next()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The simple commands of a line, split at the unquoted operators that join them (`&&`, `||`,
/// `;`, `|`, `&`, newlines, parentheses), each as its words; empty ones are left out.
pub fn commands(line: &str) -> Vec<Vec<String>> {
    let mut commands = Vec::new();
    let mut current = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                current.push(c);
                for c in chars.by_ref() {
                    current.push(c);
                    if c == '\'' {
                        break;
                    }
                }
            }
            '"' => {
                current.push(c);
                while let Some(c) = chars.next() {
                    current.push(c);
                    match c {
                        '"' => break,
                        '\\' => current.extend(chars.next()),
                        _ => {}
                    }
                }
            }
            '\\' => {
                current.push(c);
                current.extend(chars.next());
            }
            // `>&` and `&>` are redirections, not a background `&`.
            '&' if current.ends_with('>') || chars.peek() == Some(&'>') => current.push(c),
            '&' | '|' | ';' | '\n' | '(' | ')' => {
                commands.push(std::mem::take(&mut current));
            }
            c => current.push(c),
        }
    }
    commands.push(current);
    commands
        .iter()
        .map(|command| words(command))
        .filter(|words| !words.is_empty())
        .collect()
}

/// Programs the agents run without asking, when every command of a line is one: a superset of
/// Claude Code's read-only commands (it also checks their flags; a command it would still ask for
/// is one the hook leaves to its own dialog).
const READ_ONLY_PROGRAMS: &[&str] = &[
    ":",
    "[",
    "[[",
    "ag",
    "alias",
    "arp",
    "awk",
    "base64",
    "basename",
    "cal",
    "cat",
    "cd",
    "cmp",
    "column",
    "comm",
    "cut",
    "date",
    "df",
    "diff",
    "dirname",
    "du",
    "echo",
    "egrep",
    "env",
    "expand",
    "expr",
    "false",
    "fd",
    "fdfind",
    "fgrep",
    "file",
    "find",
    "fmt",
    "fold",
    "free",
    "grep",
    "groups",
    "head",
    "hexdump",
    "hostname",
    "id",
    "jq",
    "less",
    "locale",
    "locate",
    "ls",
    "lsof",
    "md5sum",
    "more",
    "netstat",
    "nice",
    "nl",
    "nohup",
    "nproc",
    "numfmt",
    "od",
    "paste",
    "pgrep",
    "pr",
    "printenv",
    "printf",
    "ps",
    "pwd",
    "readlink",
    "realpath",
    "rev",
    "rg",
    "route",
    "sed",
    "seq",
    "sha1sum",
    "sha256sum",
    "shasum",
    "sleep",
    "sort",
    "ss",
    "stat",
    "stdbuf",
    "strings",
    "tac",
    "tail",
    "test",
    "time",
    "timeout",
    "tput",
    "tr",
    "tree",
    "true",
    "tsort",
    "type",
    "uname",
    "unexpand",
    "uniq",
    "uptime",
    "wc",
    "whereis",
    "which",
    "whoami",
    "xargs",
    "xxd",
    "yq",
];

/// `git` subcommands Claude Code treats as read-only (some only with some flags).
const READ_ONLY_GIT: &[&str] = &[
    "blame",
    "branch",
    "cat-file",
    "config",
    "describe",
    "diff",
    "for-each-ref",
    "grep",
    "log",
    "ls-files",
    "ls-remote",
    "merge-base",
    "reflog",
    "remote",
    "rev-list",
    "rev-parse",
    "shortlog",
    "show",
    "stash",
    "status",
    "tag",
    "worktree",
];

/// The last word of `gh` read-only commands (`gh pr view`, `gh run list`, …), and `gh search`.
const READ_ONLY_GH: &[&str] = &["checks", "diff", "list", "status", "view"];

/// `docker` subcommands Claude Code treats as read-only.
const READ_ONLY_DOCKER: &[&str] = &["images", "inspect", "logs", "ps"];

/// Whether every command of the line only reads, or runs one of `more_programs`.
pub fn only_reads(line: &str, more_programs: &[&str]) -> bool {
    commands(line).iter().all(|words| {
        // Assignments before the program (`LANG=C ls`) do not change what it is.
        let mut words = words
            .iter()
            .map(String::as_str)
            .skip_while(|word| is_assignment(word));
        let Some(program) = words.next() else {
            return true;
        };
        let program = program.rsplit('/').next().unwrap_or(program);
        let rest: Vec<&str> = words.filter(|word| !word.starts_with('-')).collect();
        match program {
            "git" => rest.first().is_some_and(|sub| READ_ONLY_GIT.contains(sub)),
            "gh" => {
                rest.first() == Some(&"search")
                    || rest.get(1).is_some_and(|sub| READ_ONLY_GH.contains(sub))
            }
            "docker" => rest
                .first()
                .is_some_and(|sub| READ_ONLY_DOCKER.contains(sub)),
            program => READ_ONLY_PROGRAMS.contains(&program) || more_programs.contains(&program),
        }
    })
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_')
            && !name.as_bytes()[0].is_ascii_digit()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quoted_word_reads_back_as_one() {
        assert_eq!(
            words(r#""/a b/reasons" hook x\ y 'it''s'"#),
            ["/a b/reasons", "hook", "x y", "its"]
        );
    }

    #[test]
    fn a_line_splits_at_its_operators_but_not_inside_quotes() {
        assert_eq!(
            commands("rm -rf build && mkdir build; ls | wc -l || (cd x & pwd)\necho 'a && b'"),
            [
                vec!["rm", "-rf", "build"],
                vec!["mkdir", "build"],
                vec!["ls"],
                vec!["wc", "-l"],
                vec!["cd", "x"],
                vec!["pwd"],
                vec!["echo", "a && b"],
            ]
        );
        assert_eq!(
            commands("ls 2>&1 &>/dev/null"),
            [vec!["ls", "2>&1", "&>/dev/null"]]
        );
        assert!(commands("  ;; ").is_empty());
    }
}
