-- harbor_logistics: ports, ships and their voyages (an invented world for hopscore's demo)
CREATE TABLE ports (
    port_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT NOT NULL,
    opened_year INTEGER
);
CREATE TABLE ships (
    ship_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    builder TEXT NOT NULL,
    built_year INTEGER,
    capacity_teu INTEGER,
    home_port_id INTEGER REFERENCES ports (port_id)
);
CREATE TABLE voyages (
    voyage_id INTEGER PRIMARY KEY,
    ship_id INTEGER REFERENCES ships (ship_id),
    from_port_id INTEGER REFERENCES ports (port_id),
    to_port_id INTEGER REFERENCES ports (port_id),
    departed TEXT,
    cargo_tonnes REAL
);
INSERT INTO ports VALUES
    (1, 'Kestrel Haven', 'Norland', 1887),
    (2, 'Port Amsel', 'Veldria', 1902),
    (3, 'Saltmere', 'Norland', 1921),
    (4, 'Corvo Bay', 'Estavia', 1955),
    (5, 'Duneport', 'Veldria', 1968);
INSERT INTO ships VALUES
    (1, 'Northern Wren', 'Halvard Yards', 2004, 4200, 1),
    (2, 'Grey Petrel', 'Halvard Yards', 2011, 6800, 3),
    (3, 'Amber Tern', 'Lysander Marine', 1998, 2500, 2),
    (4, 'Storm Kittiwake', 'Lysander Marine', 2016, 9100, 4),
    (5, 'Pale Gannet', 'Orsk Shipworks', 2008, 5300, 5),
    (6, 'Silver Auk', 'Orsk Shipworks', 2019, 11000, 1);
INSERT INTO voyages VALUES
    (1, 1, 1, 2, '2023-01-04', 3100),
    (2, 3, 2, 1, '2023-01-09', 1800),
    (3, 3, 2, 4, '2023-02-11', 2000),
    (4, 5, 5, 2, '2023-02-20', 4100),
    (5, 2, 3, 2, '2023-03-02', 5200),
    (6, 4, 2, 5, '2023-03-15', 7700),
    (7, 6, 1, 3, '2023-04-01', 9800),
    (8, 1, 2, 3, '2023-04-18', 2900),
    (9, 2, 3, 1, '2023-05-07', 6100),
    (10, 5, 4, 2, '2023-05-22', 3900),
    (11, 4, 4, 1, '2023-06-03', 8800),
    (12, 3, 1, 2, '2023-06-19', 2200);
