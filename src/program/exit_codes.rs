//! Exit statuses, like grep's.

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// All is well.
    Success,
    /// The command found what it looks for: calls flagged, coverage below the threshold.
    Finding,
    /// A usage, input or I/O error.
    Error,
    /// The status of a program `reasons` ran on the user's behalf, passed on as it is:
    /// `reasons proxy` exits with its server's.
    Child(i32),
}

impl From<ExitCode> for i32 {
    fn from(code: ExitCode) -> i32 {
        match code {
            ExitCode::Success => 0,
            ExitCode::Finding => 1,
            ExitCode::Error => 2,
            ExitCode::Child(code) => code,
        }
    }
}
