package dev.lease.fence.jpa.app;

import java.util.HashSet;
import java.util.Set;

import jakarta.persistence.CollectionTable;
import jakarta.persistence.Column;
import jakarta.persistence.ElementCollection;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.JoinColumn;
import jakarta.persistence.JoinTable;
import jakarta.persistence.ManyToMany;
import jakarta.persistence.OneToMany;

import dev.lease.fence.jpa.FenceColumn;

/**
 * A fenced entity whose collections Hibernate writes through collection actions, not through the entity's row: an
 * element collection, a many-to-many join table, and unidirectional one-to-many associations over a join table and
 * over a join column.
 */
@Entity
public class Shipment {

    @Id
    private Long id;

    private String state;

    @FenceColumn
    private long fence;

    @ElementCollection
    @CollectionTable(name = "shipment_label", joinColumns = @JoinColumn(name = "shipment_id"))
    @Column(name = "label")
    private Set<String> labels = new HashSet<>();

    @ManyToMany
    @JoinTable(name = "shipment_note", joinColumns = @JoinColumn(name = "shipment_id"),
            inverseJoinColumns = @JoinColumn(name = "note_id"))
    private Set<Note> notes = new HashSet<>();

    @OneToMany
    @JoinTable(name = "shipment_attachment", joinColumns = @JoinColumn(name = "shipment_id"),
            inverseJoinColumns = @JoinColumn(name = "note_id"))
    private Set<Note> attachments = new HashSet<>();

    @OneToMany
    @JoinColumn(name = "shipment_id")
    private Set<Parcel> parcels = new HashSet<>();

    protected Shipment() {
    }

    public Shipment(long id, String state) {
        this.id = id;
        this.state = state;
    }

    public Set<String> getLabels() {
        return labels;
    }

    public void setLabels(Set<String> labels) {
        this.labels = labels;
    }

    public Set<Note> getNotes() {
        return notes;
    }

    public Set<Note> getAttachments() {
        return attachments;
    }

    public Set<Parcel> getParcels() {
        return parcels;
    }

    public long getFence() {
        return fence;
    }
}
