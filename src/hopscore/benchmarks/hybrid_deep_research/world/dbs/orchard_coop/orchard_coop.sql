-- orchard_coop: the farms of a fruit cooperative, its varieties and harvests (invented)
CREATE TABLE farms (
    farm_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    region TEXT NOT NULL,
    hectares REAL,
    founded INTEGER
);
CREATE TABLE varieties (
    variety_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    fruit TEXT NOT NULL
);
CREATE TABLE harvests (
    farm_id INTEGER REFERENCES farms (farm_id),
    variety_id INTEGER REFERENCES varieties (variety_id),
    year INTEGER,
    tonnes REAL
);
INSERT INTO farms VALUES
    (1, 'Brightwater', 'Ellmoor', 42.0, 1951),
    (2, 'Copper Hill', 'Ellmoor', 18.5, 1978),
    (3, 'Juniper Vale', 'Castra', 63.0, 1934),
    (4, 'Oakridge', 'Castra', 27.0, 1990),
    (5, 'Millbrook', 'Tarn', 35.0, 1962);
INSERT INTO varieties VALUES
    (1, 'Ellmoor Gold', 'apple'),
    (2, 'Red Castra', 'apple'),
    (3, 'Winter Pearl', 'pear'),
    (4, 'Sunset Blush', 'peach'),
    (5, 'Tarn Russet', 'apple');
INSERT INTO harvests VALUES
    (1, 1, 2022, 120), (1, 3, 2022, 40), (2, 4, 2022, 55), (3, 2, 2022, 210),
    (3, 1, 2022, 90), (4, 2, 2022, 75), (5, 5, 2022, 130), (5, 3, 2022, 60),
    (1, 1, 2023, 130), (1, 3, 2023, 35), (2, 4, 2023, 48), (3, 2, 2023, 150),
    (3, 1, 2023, 70), (4, 2, 2023, 80), (5, 5, 2023, 190), (5, 3, 2023, 85);
