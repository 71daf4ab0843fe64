//go:build !knowncause

package main

const sanitizeRounds = 1_000_000
