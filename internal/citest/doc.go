// Package citest holds the CI scripts in .ci/ to the tree: tests only.
package citest
