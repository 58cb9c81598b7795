package dev.lease.fence.jpa;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.spi.BackendTraits;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * Leased sections whose token the test chooses: an engine over a backend that grants every request with one given
 * token. A double for the engine's source of tokens only; the fence under test, Hibernate and the databases are
 * real. Each token has an engine of its own, like two instances of an application.
 */
final class FixedTokens implements AutoCloseable {

    static final String LEASE = "invoices";

    private final LeaseEngine engine;

    private FixedTokens(long token) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, new Backend(token));
        this.engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    static FixedTokens of(long token) {
        return new FixedTokens(token);
    }

    /** Runs {@code work} in a leased section whose token is this one's. */
    <T> T call(Supplier<T> work) {
        return engine.execute(LeaseSpec.of(LEASE, LeaseKind.CORRECTNESS), lease -> work.get());
    }

    void run(Runnable work) {
        call(() -> {
            work.run();
            return null;
        });
    }

    @Override
    public void close() {
        engine.close();
    }

    private record FixedGrant(String name, OptionalLong token) implements Grant {
    }

    private static final class Backend implements LeaseBackend<FixedGrant> {

        private final long token;

        Backend(long token) {
            this.token = token;
        }

        @Override
        public String id() {
            return "fixed-token";
        }

        @Override
        public BackendTraits traits() {
            return BackendTraits.fenced();
        }

        @Override
        public Optional<FixedGrant> tryAcquire(GrantRequest request) {
            return Optional.of(new FixedGrant(request.name(), OptionalLong.of(token)));
        }

        @Override
        public boolean renew(FixedGrant grant) {
            return true;
        }

        @Override
        public void release(FixedGrant grant) {
        }
    }
}
