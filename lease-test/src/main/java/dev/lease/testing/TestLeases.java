package dev.lease.testing;

import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Supplier;

import dev.lease.Lease;
import dev.lease.LeaseCallback;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.LeaseTemplate;
import dev.lease.LeasedWork;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.spi.LeaseBackend;

/**
 * Real leases in this JVM's memory for an application's unit tests, with a way to take one away from its holder:
 * both kinds are served by an {@link InMemoryLeaseBackend} through a real engine, so sections are bound to the
 * thread, renewed, fenced with tokens and interrupted on loss exactly as in production. Close it after the test.
 *
 * <pre>{@code
 * try (TestLeases leases = TestLeases.inMemory()) {
 *     Future<?> running = pool.submit(() -> leases.execute(spec, lease -> importer.run()));
 *     ...
 *     leases.lose("import");          // the importer's thread is interrupted now
 *     assertThatThrownBy(running::get).hasCauseInstanceOf(LeaseLostException.class);
 * }
 * }</pre>
 *
 * In a Spring Boot test, {@code lease.backend=in-memory} does the same for the whole context; its
 * {@link InMemoryLeaseBackend} bean's {@link InMemoryLeaseBackend#revoke revoke} takes a lease away.
 */
public final class TestLeases implements LeaseTemplate, AutoCloseable {

    private final InMemoryLeaseBackend backend;
    private final LeaseEngine engine;

    private TestLeases(InMemoryLeaseBackend backend) {
        this.backend = backend;
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(LeaseKind.CORRECTNESS, backend);
        routes.put(LeaseKind.EFFICIENCY, backend);
        this.engine = new LeaseEngine(BackendRouter.of(routes), LeaseDefaults.standard());
    }

    /** Leases of both kinds in memory, with the default ttl and renewal interval. */
    public static TestLeases inMemory() {
        return new TestLeases(new InMemoryLeaseBackend());
    }

    /**
     * Takes the lease {@code name} away from its holder, which learns it at once: its section is interrupted and
     * ends with {@link dev.lease.LeaseLostException}, as after a real loss.
     *
     * @param name the lease name, as evaluated
     * @return whether someone held it
     */
    public boolean lose(String name) {
        return backend.revoke(name);
    }

    /**
     * The last token granted for a name.
     *
     * @param name the lease name, as evaluated
     * @return the token, or empty when the name was never granted
     */
    public OptionalLong lastToken(String name) {
        return backend.lastToken(name);
    }

    @Override
    public Lease acquire(LeaseSpec spec) {
        return engine.acquire(spec);
    }

    @Override
    public Optional<Lease> tryAcquire(LeaseSpec spec) {
        return engine.tryAcquire(spec);
    }

    @Override
    public <T> T execute(LeaseSpec spec, LeaseCallback<T> work) {
        return engine.execute(spec, work);
    }

    @Override
    public <T> T run(LeaseSpec spec, LeasedWork<T> work, Supplier<T> whenBusy) throws Throwable {
        return engine.run(spec, work, whenBusy);
    }

    /** Ends every lease still held (their holders are interrupted) and stops renewing. */
    @Override
    public void close() {
        engine.close();
    }
}
