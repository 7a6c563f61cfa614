//! The kernel counters of a measured window: attached to every thread of
//! the server's process tree and to the generator's own threads when the
//! window opens, read when it closes (see `corobench_sampler::ThreadCounters`
//! for why then and not at the server's start).

use std::sync::Arc;

use corobench_load::Progress;
use corobench_model::{Side, SideCounters, TrialCounters};
use corobench_sampler::ThreadCounters;

/// Counters counting since the window opened.
#[derive(Debug)]
pub(super) struct WindowCounters {
    server: Result<ThreadCounters, String>,
    generator: ThreadCounters,
    /// The generator's live totals, and its responses when attaching.
    progress: Arc<Progress>,
    responses_at_attach: u64,
}

impl WindowCounters {
    /// Attaches to the threads of group `pgid` and to the generator's,
    /// whose `progress` counts the responses of the same span.
    /// `pgid` is `None` for a server already running whose process the
    /// spec does not name: its side is missing, with that reason.
    pub(super) fn attach(pgid: Option<u32>, progress: Arc<Progress>) -> Self {
        let server = match pgid {
            None => Err(
                "the server was already running and its process is not named (give \
                         pid or process in its [servers] table)"
                    .to_owned(),
            ),
            Some(pgid) => corobench_sampler::group_counters(pgid)
                .map_err(|e| format!("the server's threads could not be listed: {e}")),
        };
        // The responses are read right after the server's counters start and
        // right after they are read: the requests served while the
        // generator's own counters attach or are read are then on both
        // sides of the ratio, or on neither.
        let responses_at_attach = progress.snapshot().responses;
        let generator = corobench_sampler::own_threads(corobench_load::THREAD_NAME_PREFIX);
        let generator = ThreadCounters::attach(&generator);
        Self {
            server,
            generator,
            progress,
            responses_at_attach,
        }
    }

    /// What each side's counters counted, and which are missing and why.
    pub(super) fn read(self) -> TrialCounters {
        let server = match self.server {
            Ok(attached) => SideCounters::of(Side::Server, attached.read()),
            Err(reason) => SideCounters::refused(Side::Server, &reason),
        };
        let responses = self.progress.snapshot().responses;
        let generator = SideCounters::of(Side::Generator, self.generator.read());
        let mut missing = server.missing;
        missing.extend(generator.missing);
        TrialCounters {
            server: server.counts,
            generator: generator.counts,
            missing,
            responses: responses.checked_sub(self.responses_at_attach),
        }
    }
}
