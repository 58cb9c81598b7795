package dev.lease.reactive;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import reactor.util.context.Context;
import reactor.util.context.ContextView;

import dev.lease.Lease;
import dev.lease.core.DetachedSection;

/**
 * What {@link ReactiveLeaseTemplate} keeps of a section that owns its lease (or runs in a term): the engine's section,
 * the resource its grant fenced, and whether its work was subscribed to. Carried in the Reactor context, so that a
 * section nested in it and re-entering its lease finds it.
 */
final class ReactiveSection {

    /** The context key: the sections the subscriber runs in, innermost first. */
    private static final Class<ReactiveSection> KEY = ReactiveSection.class;

    private final DetachedSection detached;
    private final String fencedAtGrant;
    private volatile boolean workSubscribed;

    /** @param fencedAtGrant the resource fenced at grant, or null */
    ReactiveSection(DetachedSection detached, String fencedAtGrant) {
        this.detached = detached;
        this.fencedAtGrant = fencedAtGrant;
    }

    DetachedSection detached() {
        return detached;
    }

    Lease lease() {
        return detached.lease();
    }

    /** Whether the grant fenced {@code resource}: a nested section naming it must not fence it again. */
    boolean fencedAtGrant(String resource) {
        return resource.equals(fencedAtGrant);
    }

    /** The work was subscribed to: from now on it may be running somewhere, whatever its subscriber does. */
    void workSubscribed() {
        workSubscribed = true;
    }

    boolean isWorkSubscribed() {
        return workSubscribed;
    }

    /** The context seen inside this section. */
    Context into(Context outer) {
        List<ReactiveSection> sections = new ArrayList<>(sections(outer).size() + 1);
        sections.add(this);
        sections.addAll(sections(outer));
        return ReactiveLeaseContext.with(outer, lease()).put(KEY, List.copyOf(sections));
    }

    /** The section of the subscriber's context that holds {@code lease}. */
    static Optional<ReactiveSection> holding(ContextView context, Lease lease) {
        return sections(context).stream().filter(section -> section.lease() == lease).findFirst();
    }

    @SuppressWarnings("unchecked")
    private static List<ReactiveSection> sections(ContextView context) {
        return (List<ReactiveSection>) context.getOrDefault(KEY, List.<ReactiveSection>of());
    }
}
