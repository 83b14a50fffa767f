// Command image writes inferload's container image as an OCI image layout
// in a tar file, with no Docker daemon: a static binary on an empty base,
// run as a non-root user. `make image` builds the binary and runs it; load
// the result with `docker load`, `podman load` or `skopeo copy
// oci-archive:inferload-oci.tar docker://REGISTRY/inferload:TAG`.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	bin := flag.String("bin", "inferload", "the static inferload binary (CGO_ENABLED=0 go build)")
	out := flag.String("out", "inferload-oci.tar", "the OCI image layout tar to write")
	tag := flag.String("tag", "inferload:dev", "the image's reference name, kept in the layout's index")
	ca := flag.String("ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to ship for TLS targets (empty: none)")
	flag.Parse()
	if err := run(*bin, *out, *tag, *ca); err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func run(bin, out, tag, ca string) error {
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var bundle []byte
	if ca != "" {
		if bundle, err = os.ReadFile(ca); err != nil {
			return fmt.Errorf("CA bundle: %w (pass -ca '' to ship none)", err)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := Write(f, binary, bundle, tag); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
