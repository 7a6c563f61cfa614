//! Trials laid out on Kubernetes, as plain data: the objects of one
//! scenario's trial (`corobench k8s render`: the target Pod running
//! `corobench serve`, its Service, the generators' Indexed Job, and over
//! TLS the Secret with the target's certificate), and the
//! idle pods a run on a cluster makes its hosts (`corobench k8s run`,
//! whose trials are trials on hosts with `kubectl exec` as the transport).
//! [`kubectl`] talks to the cluster as the user would.

pub mod kubectl;
pub mod layout;
pub mod manifests;
pub mod pods;
pub mod tls;

pub use kubectl::{Kubectl, KubectlError};
pub use layout::{LayoutError, LayoutOptions, layout};
pub use pods::PodLayout;
