//! The hook's installation into the agents' settings (the hooks as the agents run them are in
//! `watch` and `real`).

mod install;
