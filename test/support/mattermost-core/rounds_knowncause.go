//go:build knowncause

package main

// Twenty-five times the baseline's work in one function: the known cause.
const sanitizeRounds = 25_000_000
