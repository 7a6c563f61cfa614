//! The machine-speed probe of a trial on hosts: `corobench serve --probe`
//! runs it on the server host's CPUs before the target starts, and each
//! `corobench load --probe` on its generator host's CPUs before the load;
//! the trial stores the server's speed and the generators' mean, as a
//! local trial stores its two sets'.

use corobench_model::MachineProbe;

use crate::protocol::Probe;

/// The trial's probe from the server host's answer and the merged load
/// report's speed; why not, when either side has none.
pub(super) fn joined(
    server: Option<Probe>,
    generators_mb_per_s: Option<f64>,
    server_host: &str,
) -> Result<MachineProbe, String> {
    let server_mb_per_s = match server {
        Some(Probe {
            mb_per_s: Some(speed),
            ..
        }) => speed,
        Some(Probe { error, .. }) => {
            let why = error.unwrap_or_else(|| "no speed".to_owned());
            return Err(format!("on the server host {server_host}: {why}"));
        }
        None => return Err(format!("corobench serve on {server_host} sent no probe")),
    };
    let generator_mb_per_s = generators_mb_per_s
        .ok_or("a generator host's load report carries no probe (its stderr says why)")?;
    Ok(MachineProbe {
        server_mb_per_s,
        generator_mb_per_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_make_the_trial_s_probe_and_a_missing_one_says_where() {
        let server = |mb_per_s, error: Option<&str>| {
            Some(Probe {
                mb_per_s,
                error: error.map(str::to_owned),
            })
        };
        let probe = joined(server(Some(900.0), None), Some(800.0), "ssh://s").unwrap();
        assert_eq!(probe.server_mb_per_s, 900.0);
        assert_eq!(probe.generator_mb_per_s, 800.0);
        let refused = joined(
            server(None, Some("CPU 9 not allowed")),
            Some(800.0),
            "ssh://s",
        );
        assert_eq!(
            refused.unwrap_err(),
            "on the server host ssh://s: CPU 9 not allowed"
        );
        let silent = joined(None, Some(800.0), "ssh://s").unwrap_err();
        assert!(silent.contains("sent no probe"), "{silent}");
        let no_generator = joined(server(Some(900.0), None), None, "ssh://s").unwrap_err();
        assert!(no_generator.contains("generator"), "{no_generator}");
    }
}
