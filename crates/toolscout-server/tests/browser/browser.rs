//! Finding (or installing) Chromium and chromedriver, and running chromedriver.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// The paths of Chromium and chromedriver, installing Debian's packages when they are
/// missing and this process may (root, `apt-get` present).
pub(crate) fn find_or_install() -> Result<(PathBuf, PathBuf)> {
    let chromium = std::env::var_os("TOOLSCOUT_CHROMIUM")
        .map_or_else(|| PathBuf::from(CHROMIUM), PathBuf::from);
    let driver = std::env::var_os("TOOLSCOUT_CHROMEDRIVER")
        .map_or_else(|| PathBuf::from(CHROMEDRIVER), PathBuf::from);
    if chromium.exists() && driver.exists() {
        return Ok((chromium, driver));
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if !root || !Path::new("/usr/bin/apt-get").exists() {
        bail!(
            "{} or {} is missing and this process cannot install them (it needs root and apt-get): \
             install Debian's `chromium` and `chromium-driver` packages, or point \
             $TOOLSCOUT_CHROMIUM and $TOOLSCOUT_CHROMEDRIVER at a Chromium and its chromedriver, \
             or set TOOLSCOUT_SKIP_BROWSER=1 to skip these tests",
            chromium.display(),
            driver.display()
        );
    }
    eprintln!("installing chromium and chromium-driver with apt-get (once)…");
    for args in [
        &["update"][..],
        &[
            "install",
            "-y",
            "--no-install-recommends",
            "chromium",
            "chromium-driver",
        ][..],
    ] {
        let status = Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .status()
            .context("running apt-get")?;
        if !status.success() {
            bail!(
                "`apt-get {}` failed ({status}): install Debian's `chromium` and `chromium-driver` by hand, or set TOOLSCOUT_SKIP_BROWSER=1",
                args.join(" ")
            );
        }
    }
    if !chromium.exists() || !driver.exists() {
        bail!(
            "apt-get installed the packages but {} or {} is still missing",
            chromium.display(),
            driver.display()
        );
    }
    Ok((chromium, driver))
}

/// A running chromedriver on a loopback port; killed when dropped.
pub(crate) struct Driver {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) url: String,
}

impl Driver {
    pub(crate) async fn start(path: &Path) -> Result<Driver> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let child = Command::new(path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", path.display()))?;
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(15);
        // reqwest is built without a TLS provider; an error means one is installed.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::new();
        loop {
            if let Ok(r) = client.get(format!("{}/status", driver.url)).send().await
                && r.status().is_success()
            {
                return Ok(driver);
            }
            if Instant::now() > deadline {
                bail!("chromedriver did not answer on {} within 15 s", driver.url);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
