// Package webconf drives the dashboard of `mosh herd serve` (herd/web) in a real browser:
// Debian's headless Chromium through chromedp, against the real mosh binary and herds whose
// members are herd/fakeengine. Without Chromium the tests skip, unless MOSH_WEB_REQUIRED=1 (CI),
// which makes them fail. Screenshots go under the test's temp dir, or MOSH_WEB_ARTIFACTS.
package webconf
