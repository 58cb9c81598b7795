package dev.lease.fence.jpa.app;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

/** An unfenced entity a {@link Shipment} owns through a unidirectional one-to-many over a join column. */
@Entity
public class Parcel {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    private String text;

    protected Parcel() {
    }

    public Parcel(String text) {
        this.text = text;
    }

    public Long getId() {
        return id;
    }
}
