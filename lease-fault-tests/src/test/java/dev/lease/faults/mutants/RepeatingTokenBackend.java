package dev.lease.faults.mutants;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;

import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * The {@link Mutant#REPEATED_TOKEN} mutant: a backend that now and then (one grant in {@value #ONE_IN}, seeded)
 * hands out the token of the previous grant of the same name made in this JVM instead of the new one, the bug of a
 * store whose counter did not move. Renewal and release still use the real grant, so the lease itself behaves; only
 * the token the holder fences with is wrong.
 */
final class RepeatingTokenBackend<G extends Grant> implements LeaseBackend<RepeatingTokenBackend.Issued<G>> {

    static final int ONE_IN = 4;

    /** The last real token granted per name in this JVM, across every holder of the JVM. */
    private static final Map<String, Long> LAST = new ConcurrentHashMap<>();

    private final LeaseBackend<G> delegate;
    private final Random random;

    RepeatingTokenBackend(LeaseBackend<G> delegate, long seed) {
        this.delegate = delegate;
        this.random = new Random(seed);
    }

    /** The store's grant, with the token this backend claims for it: the store's own, or now and then an older one. */
    record Issued<G extends Grant>(G real, OptionalLong token) implements Grant {

        @Override
        public String name() {
            return real.name();
        }
    }

    @Override
    public Optional<Issued<G>> tryAcquire(GrantRequest request) throws Exception {
        Optional<G> grant = delegate.tryAcquire(request);
        if (grant.isEmpty() || grant.get().token().isEmpty()) {
            return grant.map(g -> new Issued<>(g, g.token()));
        }
        long real = grant.get().token().getAsLong();
        Long previous = LAST.put(request.name(), real);
        boolean repeat;
        synchronized (random) {
            repeat = random.nextInt(ONE_IN) == 0;
        }
        long claimed = previous != null && previous < real && repeat ? previous : real;
        return Optional.of(new Issued<>(grant.get(), OptionalLong.of(claimed)));
    }

    @Override
    public boolean renew(Issued<G> grant) throws Exception {
        return delegate.renew(grant.real());
    }

    @Override
    public void release(Issued<G> grant) throws Exception {
        delegate.release(grant.real());
    }

    @Override
    public String id() {
        return delegate.id();
    }

    @Override
    public boolean issuesFencingTokens() {
        return delegate.issuesFencingTokens();
    }

    @Override
    public String whyNotFenced() {
        return delegate.whyNotFenced();
    }

    @Override
    public void abandon(GrantRequest request) throws Exception {
        delegate.abandon(request);
    }

    @Override
    public void awaitRelease(String name, Duration maxWait) throws InterruptedException {
        delegate.awaitRelease(name, maxWait);
    }

    @Override
    public Optional<Duration> maxTtl() {
        return delegate.maxTtl();
    }

    @Override
    public void validateName(String name) {
        delegate.validateName(name);
    }
}
