package dev.lease.samples.reactive;

import java.io.IOException;
import java.io.UncheckedIOException;

import dev.lease.testing.PostgresServer;

/** The servers the tests start for themselves. */
final class ReactiveServers {

    private ReactiveServers() {
    }

    static PostgresServer postgres() {
        try {
            return PostgresServer.start();
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
