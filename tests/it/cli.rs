//! The command line as a whole: help, exit statuses, completions.

use crate::util::run;

#[test]
fn help_lists_every_subcommand() {
    let run = run(&["--help"]);
    assert_eq!(run.code, 0);
    for command in [
        "extract",
        "check",
        "stats",
        "filter",
        "proxy",
        "completions",
    ] {
        assert!(
            run.stdout.contains(command),
            "{command} missing from --help"
        );
    }
}

#[test]
fn usage_errors_exit_2() {
    let run = run(&["extract", "--format", "yaml"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("yaml"));
}

#[test]
fn completions_are_written_for_bash() {
    let run = run(&["completions", "bash"]);
    assert_eq!(run.code, 0);
    assert!(run.stdout.contains("complete -F _reasons"));
    assert!(run.stdout.contains("extract"));
}
