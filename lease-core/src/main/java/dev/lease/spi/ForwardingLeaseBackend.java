package dev.lease.spi;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * A backend that passes every call to another one: the base of every wrapper that watches, decorates or disturbs a
 * backend (a test that counts calls, a mutant that breaks one rule). Extend it and override what you change. Every
 * method of {@link LeaseBackend} is forwarded, its defaults included, so that the engine sees the wrapped backend's
 * {@link #traits() traits}, {@link #renewAll batched renewals} and {@link #abandon clean-up} rather than the
 * interface's defaults: a wrapper written by hand hides each capability added to the SPI after it was written. The
 * build keeps it so: a test fails when a method of {@link LeaseBackend} is not overridden here, and an architecture
 * rule fails when a backend that holds another backend does not extend this class.
 *
 * @param <G> the wrapped backend's grant type
 */
public abstract class ForwardingLeaseBackend<G extends Grant> implements LeaseBackend<G> {

    private final LeaseBackend<G> target;

    /**
     * Wraps a backend.
     *
     * @param target the backend every call goes to
     */
    protected ForwardingLeaseBackend(LeaseBackend<G> target) {
        this.target = Objects.requireNonNull(target, "target");
    }

    /**
     * The wrapped backend.
     *
     * @return the backend every call goes to
     */
    protected LeaseBackend<G> target() {
        return target;
    }

    @Override
    public String id() {
        return target.id();
    }

    @Override
    public BackendTraits traits() {
        return target.traits();
    }

    @Override
    public Optional<G> tryAcquire(GrantRequest request) throws Exception {
        return target.tryAcquire(request);
    }

    @Override
    public boolean renew(G grant) throws Exception {
        return target.renew(grant);
    }

    @Override
    public Set<G> renewAll(Collection<G> grants) throws Exception {
        return target.renewAll(grants);
    }

    @Override
    public void release(G grant) throws Exception {
        target.release(grant);
    }

    @Override
    public void abandon(GrantRequest request) throws Exception {
        target.abandon(request);
    }

    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        target.awaitRelease(name, maxWait);
    }

    @Override
    public Map<String, Object> checkHealth(Duration timeout) throws Exception {
        return target.checkHealth(timeout);
    }

    @Override
    public void validateName(String name) {
        target.validateName(name);
    }
}
