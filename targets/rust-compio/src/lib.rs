//! The compio target as a library, so tests can run the server in-process.

mod connection;
mod db;
mod endpoints;
mod server;
mod tasks;
mod upload;

pub use server::{Config, start, start_on};
