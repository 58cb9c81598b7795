package dev.lease.faults.mutants;

import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.lease.spi.ForwardingLeaseBackend;
import dev.lease.spi.Grant;
import dev.lease.spi.GrantRequest;
import dev.lease.spi.LeaseBackend;

/**
 * The {@link Mutant#REPEATED_TOKEN} mutant: a backend that now and then (one grant in {@value #ONE_IN}, seeded)
 * hands out the token of the previous grant of the same name made in this JVM instead of the new one, the bug of a
 * store whose counter did not move. Renewal and release still use the real grant, so the lease itself behaves; only
 * the token the holder fences with is wrong. Everything else, the store's traits included, is forwarded unchanged.
 *
 * <p>Its grants wrap the store's ({@link Issued}), so it forwards to the store as a backend of any {@link Grant}: every
 * call that takes a grant is overridden here to hand the store back its own.
 */
final class RepeatingTokenBackend<G extends Grant> extends ForwardingLeaseBackend<Grant> {

    static final int ONE_IN = 4;

    /** The last real token granted per name in this JVM, across every holder of the JVM. */
    private static final Map<String, Long> LAST = new ConcurrentHashMap<>();

    private final Random random;

    @SuppressWarnings("unchecked")
    RepeatingTokenBackend(LeaseBackend<G> delegate, long seed) {
        // Sound: the store is only ever handed grants it issued itself (see real), never an Issued.
        super((LeaseBackend<Grant>) (LeaseBackend<?>) delegate);
        this.random = new Random(seed);
    }

    /** The store's grant, with the token this backend claims for it: the store's own, or now and then an older one. */
    record Issued(Grant real, OptionalLong token) implements Grant {

        @Override
        public String name() {
            return real.name();
        }
    }

    @Override
    public Optional<Grant> tryAcquire(GrantRequest request) throws Exception {
        Optional<Grant> grant = target().tryAcquire(request);
        if (grant.isEmpty() || grant.get().token().isEmpty()) {
            return grant.map(g -> new Issued(g, g.token()));
        }
        long real = grant.get().token().getAsLong();
        Long previous = LAST.put(request.name(), real);
        boolean repeat;
        synchronized (random) {
            repeat = random.nextInt(ONE_IN) == 0;
        }
        long claimed = previous != null && previous < real && repeat ? previous : real;
        return Optional.of(new Issued(grant.get(), OptionalLong.of(claimed)));
    }

    @Override
    public boolean renew(Grant grant) throws Exception {
        return target().renew(real(grant));
    }

    /** One call to the store, as without the mutant; its lost grants are answered as the ones the engine holds. */
    @Override
    public Set<Grant> renewAll(Collection<Grant> grants) throws Exception {
        Map<Grant, Grant> issuedByReal = new HashMap<>();
        grants.forEach(grant -> issuedByReal.put(real(grant), grant));
        Set<Grant> lost = new HashSet<>();
        // A grant the store names that is none of the batch stays as it is: the engine then fails the call.
        target().renewAll(List.copyOf(issuedByReal.keySet()))
                .forEach(real -> lost.add(issuedByReal.getOrDefault(real, real)));
        return lost;
    }

    @Override
    public void release(Grant grant) throws Exception {
        target().release(real(grant));
    }

    private static Grant real(Grant grant) {
        return ((Issued) grant).real();
    }
}
