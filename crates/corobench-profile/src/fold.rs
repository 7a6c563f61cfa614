//! `perf script` output → folded stacks, one line per distinct stack:
//! `comm;outermost;…;innermost SAMPLES`.
//!
//! The script is asked for no period field ([`crate::record`]'s fields),
//! so each stack counts once per sample rather than by the event's period.

use inferno::collapse::Collapse;
use inferno::collapse::perf::{Folder, Options};

use crate::error::ProfileError;

/// A profile's stacks, folded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedStacks {
    /// The folded lines, newline-terminated, sorted as inferno writes them.
    pub text: String,
    /// Samples over all stacks (the sum of the lines' counts).
    pub samples: u64,
}

/// Folds the output of `perf script`.
///
/// # Errors
/// [`ProfileError::Script`] when the text is not `perf script` output.
pub fn fold(perf_script: &[u8]) -> Result<FoldedStacks, ProfileError> {
    let mut options = Options::default();
    // Single-threaded: the profile is small and the server's CPUs stay quiet.
    options.nthreads = 1;
    let mut folded = Vec::new();
    Folder::from(options)
        .collapse(perf_script, &mut folded)
        .map_err(|e| ProfileError::Script(e.to_string()))?;
    let text = String::from_utf8_lossy(&folded).into_owned();
    let samples = sample_count(&text);
    Ok(FoldedStacks { text, samples })
}

/// The sum of the counts ending each folded line.
fn sample_count(folded: &str) -> u64 {
    folded
        .lines()
        .filter_map(|line| line.rsplit_once(' '))
        .filter_map(|(_, count)| count.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = "yes  3836 10489.483513:   cpu-clock:pppH: \n\
        \t            250e main (/usr/bin/yes)\n\n\
        yes  3836 10489.503760:   cpu-clock:pppH: \n\
        \tffffffff821ed4e6 do_syscall_64+0x46 ([kernel.kallsyms])\n\
        \t           f8350 __GI___libc_write+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \t            250e main (/usr/bin/yes)\n\n\
        yes  3836 10489.513861:   cpu-clock:pppH: \n\
        \tffffffff821ed4e6 do_syscall_64+0x46 ([kernel.kallsyms])\n\
        \t           f8350 __GI___libc_write+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n\
        \t            250e main (/usr/bin/yes)\n\n";

    #[test]
    fn perf_script_output_folds_into_one_line_per_stack() {
        let folded = fold(SCRIPT.as_bytes()).unwrap();
        assert_eq!(
            folded.text,
            "yes;main 1\nyes;main;__GI___libc_write;do_syscall_64 2\n"
        );
        assert_eq!(folded.samples, 3);
    }

    #[test]
    fn no_samples_fold_to_nothing() {
        let folded = fold(b"").unwrap();
        assert_eq!((folded.text.as_str(), folded.samples), ("", 0));
    }
}
