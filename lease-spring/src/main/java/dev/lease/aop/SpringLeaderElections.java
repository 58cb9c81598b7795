package dev.lease.aop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ApplicationEventPublisherAware;
import org.springframework.context.SmartLifecycle;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.core.Election;
import dev.lease.core.LeaseEngine;
import dev.lease.leader.LeaderElections;
import dev.lease.leader.Leadership;
import dev.lease.leader.LeadershipGrantedEvent;
import dev.lease.leader.LeadershipRevokedEvent;
import dev.lease.spi.LeaseNames;

/**
 * The {@link LeaderElections} bean: every election declared by a {@link dev.lease.leader.LeaderOnly} method or by
 * configuration, checked once all singletons exist (routing, timing, and the name against the backend's rules),
 * campaigning from the start of the application context (a {@link SmartLifecycle}) and released when it stops, before
 * the lease engine closes, so that another instance takes over at once. A context stopped and started again (as
 * checkpoint and restore do) campaigns again, as after a fresh start, through the same {@link Leadership} objects.
 * Grants and revocations are published as application events.
 */
public class SpringLeaderElections implements LeaderElections, SmartLifecycle, ApplicationEventPublisherAware {

    private static final Log log = LogFactory.getLog(SpringLeaderElections.class);

    /**
     * How an election is declared.
     *
     * @param election the election name
     * @param kind the lease kind of its terms
     * @param ttl its terms' ttl, or null for {@code lease.default-ttl}
     * @param renewEvery its terms' renewal interval, or null for the default
     * @param declaredBy what declared it, for messages: a method, or a configuration property
     */
    public record Declaration(String election, LeaseKind kind, Duration ttl, Duration renewEvery, String declaredBy) {

        /** Checks the required components. */
        public Declaration {
            Objects.requireNonNull(election, "election");
            Objects.requireNonNull(declaredBy, "declaredBy");
        }
    }

    private final ObjectProvider<LeaseEngine> engine;
    private final Map<String, Declaration> declared = new TreeMap<>();
    private final Map<String, RestartableElection> elections = new TreeMap<>();
    private ApplicationEventPublisher events = event -> { };
    private volatile boolean running;
    /** Whether elections were created once: a declaration after that creates its election at once. */
    private boolean created;

    /**
     * @param engine the engine the elections campaign on (an application's own {@code LeaseTemplate} cannot run
     *        elections), looked up when the first election is created
     * @param configured elections declared by configuration ({@code lease.leader.elections.*}); their kind may be
     *        null when a {@code @LeaderOnly} method gives it
     */
    public SpringLeaderElections(ObjectProvider<LeaseEngine> engine, Collection<Declaration> configured) {
        this.engine = engine;
        configured.forEach(this::declare);
    }

    @Override
    public void setApplicationEventPublisher(ApplicationEventPublisher publisher) {
        this.events = publisher;
    }

    /**
     * Adds a declaration; a second declaration of one election must agree on the kind.
     *
     * @throws LeaseConfigurationException on a conflict or an invalid name
     */
    synchronized void declare(Declaration declaration) {
        try {
            LeaseNames.validate(declaration.election());
        }
        catch (IllegalArgumentException ex) {
            throw new LeaseConfigurationException(declaration.declaredBy() + ": election '" + declaration.election()
                    + "' is refused: " + ex.getMessage(), "name the election like a lease, e.g. \"invoice-reminders\".");
        }
        Declaration known = declared.get(declaration.election());
        if (known == null) {
            declared.put(declaration.election(), declaration);
            if (created) {
                createElections();
            }
            return;
        }
        if (known.kind() != null && declaration.kind() != null && known.kind() != declaration.kind()) {
            throw new LeaseConfigurationException("Election '" + declaration.election() + "' is declared "
                    + known.kind() + " by " + known.declaredBy() + " and " + declaration.kind() + " by "
                    + declaration.declaredBy() + ".", "declare one kind for the election everywhere: CORRECTNESS if "
                            + "two leaders at once could corrupt data, else EFFICIENCY.");
        }
        declared.put(declaration.election(), new Declaration(declaration.election(),
                known.kind() != null ? known.kind() : declaration.kind(),
                known.ttl() != null ? known.ttl() : declaration.ttl(),
                known.renewEvery() != null ? known.renewEvery() : declaration.renewEvery(),
                known.kind() != null ? known.declaredBy() : declaration.declaredBy()));
    }

    /**
     * Creates every declared election, checking its kind's routing and its timing; called once all singletons exist.
     *
     * @throws LeaseConfigurationException naming the declaration and the fix
     */
    synchronized void createElections() {
        created = true;
        if (declared.size() == elections.size()) {
            return;
        }
        LeaseEngine leases = engine.getIfUnique();
        for (Declaration declaration : declared.values()) {
            if (elections.containsKey(declaration.election())) {
                continue;
            }
            if (declaration.kind() == null) {
                throw new LeaseConfigurationException(declaration.declaredBy() + " declares election '"
                        + declaration.election() + "' without a kind, and no @LeaderOnly method names it.",
                        "set lease.leader.elections." + declaration.election() + ".kind to CORRECTNESS or EFFICIENCY.");
            }
            if (leases == null) {
                throw new LeaseConfigurationException(declaration.declaredBy() + " declares election '"
                        + declaration.election() + "', but there is no single LeaseEngine bean to campaign on (an "
                        + "application's own LeaseTemplate cannot run elections).", "keep the starter's LeaseEngine "
                                + "bean (your LeaseTemplate may wrap it), or remove the election.");
            }
            String culprit = declaration.declaredBy() + " (election '" + declaration.election() + "')";
            leases.validate(culprit, declaration.kind(), declaration.ttl(), declaration.renewEvery(), false);
            StartupNameCheck.check(leases, culprit, declaration.kind(), new NameTemplate(declaration.election(), null),
                    "nightly-reports");
            LeaseSpec spec = LeaseSpec.of(declaration.election(), declaration.kind());
            if (declaration.ttl() != null) {
                spec = spec.withTtl(declaration.ttl());
            }
            if (declaration.renewEvery() != null) {
                spec = spec.withRenewEvery(declaration.renewEvery());
            }
            RestartableElection election = new RestartableElection(leases, spec, new Election.Listener() {
                @Override
                public void granted(LeadershipGrantedEvent event) {
                    events.publishEvent(event);
                }

                @Override
                public void revoked(LeadershipRevokedEvent event) {
                    events.publishEvent(event);
                }
            });
            elections.put(declaration.election(), election);
            if (running) {
                // Declared after the context started (a lazy bean): it campaigns from now on.
                election.start();
            }
        }
    }

    /** The election of a {@code @LeaderOnly} method; present once the application context is refreshed. */
    synchronized RestartableElection election(String name) {
        RestartableElection election = elections.get(name);
        if (election == null) {
            throw new IllegalStateException("Election '" + name + "' is not created yet: @LeaderOnly methods run "
                    + "once the application context is refreshed");
        }
        return election;
    }

    @Override
    public synchronized Leadership get(String election) {
        createElections();
        RestartableElection found = elections.get(election);
        if (found == null) {
            throw new IllegalArgumentException("No election '" + election + "' in this application; it has "
                    + (elections.isEmpty() ? "none" : String.join(", ", elections.keySet()))
                    + ". Declare it with @LeaderOnly(election = \"" + election + "\", kind = ...) or lease.leader"
                    + ".elections." + election + ".kind.");
        }
        return found;
    }

    @Override
    public synchronized Collection<Leadership> all() {
        createElections();
        return List.copyOf(elections.values());
    }

    /** Campaigns for every election, at the first start as after a stop: each start campaigns anew. */
    @Override
    public void start() {
        List<RestartableElection> toStart;
        synchronized (this) {
            createElections();
            toStart = new ArrayList<>(elections.values());
            running = true;
            // Under the lock (starting only starts a thread), so that a stop racing with it closes what it started.
            toStart.forEach(RestartableElection::start);
        }
        if (!toStart.isEmpty()) {
            log.info("Campaigning for election(s) " + String.join(", ", elections.keySet()));
        }
    }

    /**
     * Releases every leadership this instance holds, so that other instances take over at once, and stops
     * campaigning until the next {@link #start()}.
     */
    @Override
    public void stop() {
        List<Election> toClose = new ArrayList<>();
        synchronized (this) {
            running = false;
            for (RestartableElection election : elections.values()) {
                Election campaign = election.detach();
                if (campaign != null) {
                    toClose.add(campaign);
                }
            }
        }
        toClose.forEach(Election::close);
    }

    @Override
    public boolean isRunning() {
        return running;
    }
}
