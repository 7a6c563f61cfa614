//! Which TCP ports a set of processes listens on: the socket inodes their
//! file descriptors hold, found among the listening sockets of
//! `/proc/net/tcp` and `/proc/net/tcp6`. A server told to listen on one
//! port and found listening on another is told apart from one still
//! starting without waiting for its whole ready timeout.

use std::collections::BTreeSet;

/// `st` of a listening socket in `/proc/net/tcp`.
const LISTEN: &str = "0A";

/// The TCP ports the processes `pids` listen on now (IPv4 and IPv6).
#[must_use]
pub fn listening_ports(pids: &[i32]) -> BTreeSet<u16> {
    listening_ports_checked(pids).unwrap_or_default()
}

/// [`listening_ports`], or `None` when no process's descriptors could be
/// read (another user's processes, without the privilege to look): then
/// nothing can be said of what they listen on.
///
/// The socket tables are those of the first process's network namespace,
/// so a server in a container is read where it listens.
#[must_use]
pub fn listening_ports_checked(pids: &[i32]) -> Option<BTreeSet<u16>> {
    let readable: Vec<Vec<u64>> = pids.iter().filter_map(|&pid| socket_inodes(pid)).collect();
    if readable.is_empty() && !pids.is_empty() {
        return None;
    }
    let inodes: BTreeSet<u64> = readable.into_iter().flatten().collect();
    if inodes.is_empty() {
        return Some(BTreeSet::new());
    }
    let netns = pids
        .first()
        .map_or_else(|| "self".to_owned(), i32::to_string);
    let tables = ["tcp", "tcp6"].map(|name| {
        std::fs::read_to_string(format!("/proc/{netns}/net/{name}"))
            .or_else(|_| std::fs::read_to_string(format!("/proc/net/{name}")))
    });
    Some(
        tables
            .iter()
            .filter_map(|table| table.as_ref().ok())
            .flat_map(|table| listeners(table))
            .filter(|(_, inode)| inodes.contains(inode))
            .map(|(port, _)| port)
            .collect(),
    )
}

/// The inodes of the sockets process `pid` holds open (`socket:[N]`);
/// `None` when its descriptors cannot be listed (gone, or not ours to see).
fn socket_inodes(pid: i32) -> Option<Vec<u64>> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let inodes = entries
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_link(entry.path()).ok())
        .filter_map(|link| {
            let text = link.to_str()?;
            text.strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect();
    Some(inodes)
}

/// (local port, inode) of every listening socket in a `/proc/net/tcp` or
/// `tcp6` table; lines that do not parse are skipped.
pub(crate) fn listeners(table: &str) -> Vec<(u16, u64)> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (local, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
            if *state != LISTEN {
                return None;
            }
            let port = u16::from_str_radix(local.rsplit_once(':')?.1, 16).ok()?;
            Some((port, inode.parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured from `/proc/net/tcp`: a listener on 2024, a connection.
    const TCP: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1077 1 000000002321a3d8 100 0 0 10 0
   1: 0100007F:86BD 0100007F:D548 06 00000000:00000000 03:00000B8B 00000000     0        0 0 3 00000000e1e65b7b
";

    /// Captured from `/proc/net/tcp6`: a listener on [::]:8080.
    const TCP6: &str = "  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000000000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5551 1 0000000000000000 100 0 0 10 0
";

    #[test]
    fn listening_sockets_are_read_with_their_inodes() {
        assert_eq!(listeners(TCP), vec![(2024, 1077)]);
        assert_eq!(listeners(TCP6), vec![(8080, 5551)]);
        assert_eq!(listeners("header only\n"), vec![]);
    }

    #[test]
    fn this_process_is_found_listening_where_it_listens() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let me = i32::try_from(std::process::id()).unwrap();
        assert!(listening_ports(&[me]).contains(&port));
    }
}
