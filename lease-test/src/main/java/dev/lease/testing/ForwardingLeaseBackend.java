package dev.lease.testing;

import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * A backend that passes every call to another one, for tests that watch or disturb a real backend: extend it and
 * override what you observe. Every method of {@link LeaseBackend} is forwarded, its defaults included, so that the
 * engine sees the wrapped backend's capabilities ({@code renewsInOneCall}, {@code boundsCallsByDeadline},
 * {@code abandon}...) and not the interface's defaults; a wrapper written by hand hides each capability added to the
 * SPI after it was written.
 *
 * @param <G> the wrapped backend's grant type
 */
public abstract class ForwardingLeaseBackend<G extends Grant> implements LeaseBackend<G> {

    private final LeaseBackend<G> target;

    /**
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
    public boolean issuesFencingTokens() {
        return target.issuesFencingTokens();
    }

    @Override
    public String whyNotFenced() {
        return target.whyNotFenced();
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
    public boolean renewsInOneCall() {
        return target.renewsInOneCall();
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
    public boolean boundsCallsByDeadline() {
        return target.boundsCallsByDeadline();
    }

    @Override
    public Optional<Duration> maxTtl() {
        return target.maxTtl();
    }

    @Override
    public Duration validityMargin(Duration ttl) {
        return target.validityMargin(ttl);
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
