//! Where this process's cgroups are: the cgroup v2 hierarchy, or a v1
//! hierarchy that lists every process it holds (`pids`, `freezer`), found
//! from `/proc/self/mountinfo` and `/proc/self/cgroup`. Pure parsers, tested
//! on captured files.

use std::path::{Path, PathBuf};

/// A cgroup hierarchy a target's cgroup can be made in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Hierarchy {
    /// This process's own cgroup folder in it, where targets' cgroups go.
    pub own_dir: PathBuf,
    pub version: Version,
}

/// Which kind of hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Version {
    /// cgroup v2: every descendant, `cgroup.kill` (Linux 5.14).
    V2,
    /// A v1 hierarchy of the named controller (`pids`, `freezer`).
    V1(&'static str),
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::V2 => f.write_str("cgroup v2"),
            Self::V1(controller) => write!(f, "the cgroup v1 {controller} hierarchy"),
        }
    }
}

/// The v1 controllers whose hierarchies hold every process (any would
/// do; these two are mounted on most machines without v2).
const V1_CONTROLLERS: [&str; 2] = ["pids", "freezer"];

/// The hierarchies this process could make cgroups in, best first: v2,
/// then the v1 ones, each at this process's own cgroup.
pub(crate) fn candidates(mountinfo: &str, own_cgroups: &str) -> Vec<Hierarchy> {
    let mounts = mounts(mountinfo);
    let memberships = memberships(own_cgroups);
    let mut found = Vec::new();
    let v2_path = memberships
        .iter()
        .find(|(id, _)| id == "0" || id.is_empty());
    if let (Some(mount), Some((_, path))) = (mounts.iter().find(|m| m.fstype == "cgroup2"), v2_path)
    {
        found.push(Hierarchy {
            own_dir: mount.dir_of(path),
            version: Version::V2,
        });
    }
    for controller in V1_CONTROLLERS {
        let mount = mounts
            .iter()
            .find(|m| m.fstype == "cgroup" && m.options.split(',').any(|o| o == controller));
        let path = memberships
            .iter()
            .find(|(controllers, _)| controllers.split(',').any(|c| c == controller));
        if let (Some(mount), Some((_, path))) = (mount, path) {
            found.push(Hierarchy {
                own_dir: mount.dir_of(path),
                version: Version::V1(controller),
            });
        }
    }
    found
}

/// A mounted cgroup file system.
#[derive(Debug)]
struct Mount {
    /// The cgroup the mount shows at its mount point (`/` unless a
    /// container mounted a subtree).
    root: String,
    point: PathBuf,
    fstype: String,
    options: String,
}

impl Mount {
    /// The folder of cgroup `path` (as `/proc/self/cgroup` gives it).
    fn dir_of(&self, path: &str) -> PathBuf {
        let relative = path
            .strip_prefix(self.root.as_str())
            .unwrap_or(path)
            .trim_start_matches('/');
        if relative.is_empty() {
            self.point.clone()
        } else {
            self.point.join(relative)
        }
    }
}

/// The cgroup file systems of a `/proc/self/mountinfo`.
fn mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            let fstype = *right.first()?;
            if fstype != "cgroup2" && fstype != "cgroup" {
                return None;
            }
            Some(Mount {
                root: unescape(left.get(3)?),
                point: PathBuf::from(unescape(left.get(4)?)),
                fstype: fstype.to_owned(),
                options: (*right.get(2)?).to_owned(),
            })
        })
        .collect()
}

/// `(controllers, path)` of each line of `/proc/self/cgroup`
/// (`4:memory:/a`, `0::/b`).
fn memberships(own_cgroups: &str) -> Vec<(String, String)> {
    own_cgroups
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ':');
            let id = fields.next()?;
            let controllers = fields.next()?;
            let path = fields.next()?;
            let key = if id == "0" && controllers.is_empty() {
                "0".to_owned()
            } else {
                controllers.to_owned()
            };
            Some((key, path.to_owned()))
        })
        .collect()
}

/// Mount paths escape space, tab, newline and backslash as octal.
fn unescape(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut rest = field;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let code = rest
            .get(at + 1..at + 4)
            .and_then(|o| u8::from_str_radix(o, 8).ok());
        match code {
            Some(byte) => {
                out.push(char::from(byte));
                rest = &rest[at + 4..];
            }
            None => {
                out.push('\\');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `dir` is a folder this process may make cgroups in.
pub(crate) fn writable(dir: &Path) -> bool {
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string.
    unsafe { libc::access(path.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Captured on a machine with both: v1 controllers and v2 at `unified`.
    const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const HYBRID_OWN: &str = "\
9:name=systemd:/
8:pids:/user.slice
6:freezer:/
4:memory:/process_api/bd0ac3be
0::/user.slice/session-1.scope
";

    #[test]
    fn a_hybrid_machine_offers_v2_first_then_the_v1_hierarchies() {
        let found = candidates(HYBRID_MOUNTS, HYBRID_OWN);
        assert_eq!(
            found,
            vec![
                Hierarchy {
                    own_dir: "/sys/fs/cgroup/unified/user.slice/session-1.scope".into(),
                    version: Version::V2,
                },
                Hierarchy {
                    own_dir: "/sys/fs/cgroup/pids/user.slice".into(),
                    version: Version::V1("pids"),
                },
                Hierarchy {
                    own_dir: "/sys/fs/cgroup/freezer".into(),
                    version: Version::V1("freezer"),
                },
            ]
        );
    }

    #[test]
    fn a_container_sees_its_subtree_at_the_mount_point() {
        let mounts = "90 80 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n";
        let found = candidates(mounts, "0::/docker/abc/sub\n");
        assert_eq!(found[0].own_dir, PathBuf::from("/sys/fs/cgroup/sub"));
        let at_root = candidates(mounts, "0::/docker/abc\n");
        assert_eq!(at_root[0].own_dir, PathBuf::from("/sys/fs/cgroup"));
    }

    #[test]
    fn no_cgroup_file_system_offers_nothing() {
        assert!(candidates("22 1 0:21 / /proc rw - proc proc rw\n", "0::/\n").is_empty());
        assert!(candidates(HYBRID_MOUNTS, "").is_empty());
    }

    #[test]
    fn escaped_mount_points_are_read_back() {
        assert_eq!(unescape(r"/mnt/a\040b"), "/mnt/a b");
        assert_eq!(unescape(r"/odd\x"), r"/odd\x");
    }
}
