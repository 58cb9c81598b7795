package dev.lease.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

import dev.lease.FencingToken;
import dev.lease.Lease;

/**
 * The leases of the reactive section a subscriber runs in, read from the Reactor {@link Context}: the twin of
 * {@link dev.lease.LeaseContext} for {@code Mono}/{@code Flux} methods under {@link dev.lease.Leased} or
 * {@link dev.lease.leader.LeaderOnly} and for {@link ReactiveLeaseTemplate}, whose work runs on no thread of its own.
 *
 * <pre>{@code
 * return ReactiveLeaseContext.token()
 *         .flatMap(token -> fence.advance("invoice-" + id, token).then(repository.bill(id)));
 * }</pre>
 */
public final class ReactiveLeaseContext {

    /** The context key: the sections' leases, innermost first. */
    private static final Class<ReactiveLeaseContext> KEY = ReactiveLeaseContext.class;

    private ReactiveLeaseContext() {
    }

    /**
     * The innermost lease of the section this is subscribed in.
     *
     * @return the lease, or an {@link IllegalStateException} error when the subscriber is in no leased section
     */
    public static Mono<Lease> current() {
        return Mono.deferContextual(context -> leases(context).stream().findFirst().map(Mono::just)
                .orElseGet(() -> Mono.error(new IllegalStateException("No lease in the Reactor context: subscribe "
                        + "inside a Mono/Flux returned by a @Leased or @LeaderOnly method, or inside the work of "
                        + "ReactiveLeaseTemplate (the context flows upstream: read it in the leased publisher, not "
                        + "after it)"))));
    }

    /**
     * The token of {@link #current()}.
     *
     * @return the token, or an error: {@link IllegalStateException} when there is no lease or its backend issues no
     *         tokens
     */
    public static Mono<FencingToken> token() {
        return current().map(Lease::token);
    }

    /**
     * The innermost lease with this name.
     *
     * @param name the lease name, as evaluated
     * @return the lease, or empty when the subscriber is in no section of that name
     */
    public static Mono<Lease> find(String name) {
        return Mono.deferContextual(context -> Mono.justOrEmpty(find(context, name)));
    }

    static Optional<Lease> find(ContextView context, String name) {
        return leases(context).stream().filter(lease -> lease.name().equals(name)).findFirst();
    }

    /** The context seen by a section of {@code lease} inside the sections of {@code outer}. */
    static Context with(Context outer, Lease lease) {
        List<Lease> leases = new ArrayList<>(leases(outer).size() + 1);
        leases.add(lease);
        leases.addAll(leases(outer));
        return outer.put(KEY, List.copyOf(leases));
    }

    @SuppressWarnings("unchecked")
    private static List<Lease> leases(ContextView context) {
        return (List<Lease>) context.getOrDefault(KEY, List.<Lease>of());
    }
}
