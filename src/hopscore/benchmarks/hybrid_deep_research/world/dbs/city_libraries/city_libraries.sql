-- city_libraries: a city's library branches, authors, books and loans (invented)
CREATE TABLE branches (
    branch_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    district TEXT NOT NULL,
    opened INTEGER
);
CREATE TABLE authors (
    author_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    born INTEGER
);
CREATE TABLE books (
    book_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER REFERENCES authors (author_id),
    year INTEGER
);
CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    book_id INTEGER REFERENCES books (book_id),
    branch_id INTEGER REFERENCES branches (branch_id),
    loan_date TEXT
);
INSERT INTO branches VALUES
    (1, 'Riverside', 'Old Town', 1908),
    (2, 'Elm Court', 'Northgate', 1956),
    (3, 'Glass House', 'Harbourside', 2012),
    (4, 'Mill Street', 'Old Town', 1931);
INSERT INTO authors VALUES
    (1, 'Noor Castell', 1950),
    (2, 'Pavel Ostrin', 1938),
    (3, 'Ida Fenwick', 1972),
    (4, 'Ruben Salo', 1961);
INSERT INTO books VALUES
    (1, 'The Salt Orchard', 1, 1984),
    (2, 'Lantern Weather', 1, 1991),
    (3, 'Grey Harbour', 2, 1969),
    (4, 'The Ninth Bridge', 3, 2005),
    (5, 'Winter Ledger', 3, 2011),
    (6, 'Paper Kites', 4, 1999),
    (7, 'Quiet Engines', 2, 1977);
INSERT INTO loans VALUES
    (1, 4, 1, '2024-01-03'), (2, 5, 3, '2024-01-05'), (3, 1, 2, '2024-01-08'),
    (4, 4, 3, '2024-01-12'), (5, 6, 3, '2024-01-15'), (6, 3, 4, '2024-01-20'),
    (7, 5, 1, '2024-02-02'), (8, 2, 2, '2024-02-06'), (9, 4, 4, '2024-02-10'),
    (10, 7, 1, '2024-02-14'), (11, 5, 2, '2024-02-19'), (12, 1, 3, '2024-03-01'),
    (13, 4, 2, '2024-03-04'), (14, 6, 1, '2024-03-09'), (15, 2, 4, '2024-03-12'),
    (16, 5, 3, '2024-03-18');
