package dev.lease.autoconfigure;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonInclude.Include;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import dev.lease.LeaseKind;
import dev.lease.LeaseTemplate;
import dev.lease.core.BackendRouter;
import dev.lease.core.HeldLeaseSnapshot;
import dev.lease.core.LeaseEngine;
import dev.lease.core.WaitingSnapshot;

/**
 * The Actuator endpoint {@code leases} ({@code GET /actuator/leases}): which backend serves each lease kind, the
 * leases this instance holds now and the leader elections it takes part in. It only reads what the engine already
 * knows: it takes no lease and asks no backend.
 *
 * <pre>{@code
 * {"routing": {"CORRECTNESS": "zookeeper", "EFFICIENCY": "redis"},
 *  "held": [{"name": "invoice-42", "kind": "CORRECTNESS", "backend": "zookeeper", "token": 17,
 *            "remainingMillis": 28650, "thread": "scheduling-1"}],
 *  "waiting": [{"name": "invoice-42", "kind": "CORRECTNESS", "since": "2026-12-06T10:15:30.120Z", "threads": 2}],
 *  "elections": []}
 * }</pre>
 *
 * <ul>
 *   <li>{@code routing} lists only the kinds that some backend serves: a kind nobody serves cannot be leased and is
 *       left out rather than shown as null.</li>
 *   <li>{@code held} is sorted by name. {@code token} is absent when the backend issues no fencing tokens;
 *       {@code thread} is null when the lease is not bound to a thread (taken with {@link LeaseTemplate#acquire} or
 *       {@link LeaseTemplate#tryAcquire} rather than {@code @Leased} or {@link LeaseTemplate#execute}). A lease that
 *       was lost and whose holder has not returned yet is not listed. The list comes from the {@link LeaseEngine}; when
 *       the application replaced the lease template by one of its own and there is no {@code LeaseEngine} bean, it is
 *       always empty.</li>
 *   <li>{@code waiting} lists the names this instance's callers wait for (an acquire with a {@code waitFor} not
 *       granted yet), sorted by name: since when the longest-waiting one waits (wall clock, for reading) and how many
 *       wait. On the instance that does not get a lease during a failover, this is where the wait shows.</li>
 *   <li>{@code elections} is empty until leader leases exist; they will fill it in through the supplier this endpoint
 *       is created with.</li>
 * </ul>
 */
@Endpoint(id = "leases")
public class LeasesEndpoint {

    private final BackendRouter router;
    private final @Nullable LeaseEngine engine;
    private final Supplier<List<ElectionDescriptor>> elections;

    /**
     * Creates the endpoint over the application's routing and engine.
     *
     * @param router which backend serves each kind
     * @param engine the engine whose held leases are listed, or null when the application has none (its own
     *        {@link LeaseTemplate} replaced it): {@code held} is then always empty
     * @param elections the elections this instance campaigns in, asked at each read; {@code List::of} until leader
     *        leases exist
     */
    public LeasesEndpoint(BackendRouter router, @Nullable LeaseEngine engine,
            Supplier<List<ElectionDescriptor>> elections) {
        this.router = Objects.requireNonNull(router, "router");
        this.engine = engine;
        this.elections = Objects.requireNonNull(elections, "elections");
    }

    /**
     * The routing, the held leases and the elections, as they are now.
     *
     * @return the endpoint's JSON body
     */
    @ReadOperation
    public LeasesDescriptor leases() {
        Map<String, String> routing = new LinkedHashMap<>();
        for (LeaseKind kind : LeaseKind.values()) {
            router.routeOf(kind).ifPresent(backend -> routing.put(kind.name(), backend.id()));
        }
        List<HeldLeaseDescriptor> held = engine == null ? List.of()
                : engine.held().stream().map(HeldLeaseDescriptor::of).toList();
        List<WaitingDescriptor> waiting = engine == null ? List.of()
                : engine.waiting().stream().map(WaitingDescriptor::of).toList();
        return new LeasesDescriptor(routing, held, waiting, List.copyOf(elections.get()));
    }

    /**
     * The body of {@code GET /actuator/leases}. An {@link OperationResponseBody}, so Actuator writes it with its own
     * JSON mapper, whatever the application did to its own.
     *
     * @param routing the id of the backend serving each kind, by kind name; kinds nobody serves are left out
     * @param held the leases this instance holds, sorted by name
     * @param waiting the names this instance's callers wait for, sorted by name
     * @param elections the leader elections this instance takes part in
     */
    public record LeasesDescriptor(Map<String, String> routing, List<HeldLeaseDescriptor> held,
            List<WaitingDescriptor> waiting, List<ElectionDescriptor> elections) implements OperationResponseBody {
    }

    /**
     * A name this instance's callers wait for.
     *
     * @param name the lease name, as evaluated
     * @param kind the lease kind
     * @param since when the longest-waiting caller started, ISO-8601 in UTC (wall clock, for reading only)
     * @param threads how many callers wait
     */
    public record WaitingDescriptor(String name, LeaseKind kind, String since, int threads) {

        static WaitingDescriptor of(WaitingSnapshot waiting) {
            return new WaitingDescriptor(waiting.name(), waiting.kind(), waiting.since().toString(),
                    waiting.threads());
        }
    }

    /**
     * A lease this instance holds.
     *
     * @param name the lease name, as evaluated
     * @param kind the lease kind
     * @param backend the id of the backend that granted it
     * @param token the fencing token, or null (left out of the JSON) when the backend issues none
     * @param remainingMillis how long the lease stays valid unless renewed, in milliseconds
     * @param thread the thread running the leased section, or null (written as null) when the lease is not bound to
     *        a thread
     */
    public record HeldLeaseDescriptor(String name, LeaseKind kind, String backend,
            @JsonInclude(Include.NON_NULL) @Nullable Long token, long remainingMillis,
            // Always written, null included: Actuator's mapper leaves nulls out, but a missing "thread" would read as
            // a field this version does not have rather than as "not bound".
            @JsonInclude(Include.ALWAYS) @Nullable String thread) {

        static HeldLeaseDescriptor of(HeldLeaseSnapshot lease) {
            return new HeldLeaseDescriptor(lease.name(), lease.kind(), lease.backend(),
                    lease.token().isPresent() ? lease.token().getAsLong() : null, lease.remaining().toMillis(),
                    lease.thread());
        }
    }

    /**
     * A leader election this instance takes part in ({@code @LeaderOnly} or {@code lease.leader.elections.*}).
     *
     * @param election the election name
     * @param kind the kind of lease the election is held with
     * @param leader whether this instance leads now
     * @param token the current term's fencing token, or null (left out of the JSON) when not leader or the backend
     *        issues none
     */
    public record ElectionDescriptor(String election, LeaseKind kind, boolean leader,
            @JsonInclude(Include.NON_NULL) @Nullable Long token) {
    }
}
