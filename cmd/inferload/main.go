// Command inferload load-tests AI inference services. See README.md.
package main

import (
	"os"

	"github.com/inferload/inferload/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.OSState()))
}
